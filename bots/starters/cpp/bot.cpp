// A cardroom starter bot for the `native` runtime: one C++17 file, no
// libraries beyond the standard one. It plays both games (Allegory and
// Allegra) with a uniformly random legal action, filling Allegory's
// `distribute` template chip by chip.
//
// Bot protocol v1 (docs/protocol.md): one JSON object per line on stdin and
// stdout. Write nothing but protocol messages to stdout; log to stderr
// (std::cerr), which the platform keeps for you.
//
// Build:  make              (a static x86-64 binary `bot`: it needs no library at run time)
// Try:    cardroom play allegra bots/starters/cpp builtin:random
//
// The file has three parts: a small JSON reader and writer (Json, parse,
// dump), the bot's choice (choose), and the protocol loop (main).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// ---------------------------------------------------------------------------
// JSON: a value, a parser for one line, a writer.
// ---------------------------------------------------------------------------

struct Json {
    enum class Kind { Null, Bool, Number, String, Array, Object };
    Kind kind = Kind::Null;
    bool boolean = false;
    std::string text;  // a String's characters (UTF-8), or a Number as written (so 7 stays 7, not 7.0)
    std::vector<Json> items;  // an Array's elements
    std::vector<std::pair<std::string, Json>> members;  // an Object's members, in their order

    bool is_null() const { return kind == Kind::Null; }
    bool is_string() const { return kind == Kind::String; }
    bool is_number() const { return kind == Kind::Number; }

    // obj["key"]: the member, or a null value when there is none (never throws).
    const Json& operator[](const std::string& key) const {
        static const Json missing;
        if (kind == Kind::Object)
            for (const auto& m : members)
                if (m.first == key) return m.second;
        return missing;
    }
    const Json& operator[](std::size_t i) const {
        static const Json missing;
        return (kind == Kind::Array && i < items.size()) ? items[i] : missing;
    }
    std::size_t size() const { return kind == Kind::Array ? items.size() : members.size(); }
    std::string str() const { return kind == Kind::String ? text : std::string(); }
    long long integer() const { return kind == Kind::Number ? std::stoll(text) : 0; }
    double number() const { return kind == Kind::Number ? std::stod(text) : 0.0; }

    static Json string(std::string s) {
        Json j;
        j.kind = Kind::String;
        j.text = std::move(s);
        return j;
    }
    static Json integer_value(long long n) {
        Json j;
        j.kind = Kind::Number;
        j.text = std::to_string(n);
        return j;
    }
    static Json object() {
        Json j;
        j.kind = Kind::Object;
        return j;
    }
    // Set a member of an object (replacing one of the same key).
    void set(const std::string& key, Json value) {
        for (auto& m : members)
            if (m.first == key) {
                m.second = std::move(value);
                return;
            }
        members.emplace_back(key, std::move(value));
    }
};

class Parser {
  public:
    explicit Parser(const std::string& s) : s_(s) {}

    Json parse_document() {
        Json value = parse_value(0);
        skip_space();
        if (pos_ != s_.size()) fail("text after the JSON value");
        return value;
    }

  private:
    static constexpr int kMaxDepth = 64;  // the platform's messages are far shallower
    const std::string& s_;
    std::size_t pos_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("JSON: " + what + " at character " + std::to_string(pos_));
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    }
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    void literal(const char* word) {
        for (const char* p = word; *p; ++p) expect(*p);
    }

    Json parse_value(int depth) {
        if (depth > kMaxDepth) fail("nested too deep");
        skip_space();
        Json j;
        char c = peek();
        if (c == '{') {
            j.kind = Json::Kind::Object;
            ++pos_;
            skip_space();
            if (peek() == '}') {
                ++pos_;
                return j;
            }
            while (true) {
                skip_space();
                if (peek() != '"') fail("expected a key");
                std::string key = parse_string();
                skip_space();
                expect(':');
                j.members.emplace_back(std::move(key), parse_value(depth + 1));
                skip_space();
                if (peek() == ',') {
                    ++pos_;
                    continue;
                }
                expect('}');
                return j;
            }
        }
        if (c == '[') {
            j.kind = Json::Kind::Array;
            ++pos_;
            skip_space();
            if (peek() == ']') {
                ++pos_;
                return j;
            }
            while (true) {
                j.items.push_back(parse_value(depth + 1));
                skip_space();
                if (peek() == ',') {
                    ++pos_;
                    continue;
                }
                expect(']');
                return j;
            }
        }
        if (c == '"') {
            j.kind = Json::Kind::String;
            j.text = parse_string();
            return j;
        }
        if (c == 't') {
            literal("true");
            j.kind = Json::Kind::Bool;
            j.boolean = true;
            return j;
        }
        if (c == 'f') {
            literal("false");
            j.kind = Json::Kind::Bool;
            return j;
        }
        if (c == 'n') {
            literal("null");
            return j;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            j.kind = Json::Kind::Number;
            j.text = parse_number();
            return j;
        }
        fail("unexpected character");
    }

    std::string parse_number() {
        std::size_t start = pos_;
        auto digits = [&] {
            std::size_t from = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            if (pos_ == from) fail("expected a digit");
        };
        if (peek() == '-') ++pos_;
        digits();
        if (peek() == '.') {
            ++pos_;
            digits();
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            digits();
        }
        return s_.substr(start, pos_ - start);
    }

    unsigned hex4() {
        if (pos_ + 4 > s_.size()) fail("short \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            char h = s_[pos_++];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= unsigned(h - '0');
            else if (h >= 'a' && h <= 'f') v |= unsigned(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= unsigned(h - 'A' + 10);
            else fail("bad \\u escape");
        }
        return v;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    std::string parse_string() {
        expect('"');
        std::string out;
        while (true) {
            if (pos_ >= s_.size()) fail("unterminated string");
            char c = s_[pos_++];
            if (c == '"') return out;
            if (c != '\\') {
                out += c;  // UTF-8 bytes pass through unchanged
                continue;
            }
            if (pos_ >= s_.size()) fail("unterminated escape");
            char e = s_[pos_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
                        pos_ += 2;
                        unsigned low = hex4();
                        if (low < 0xDC00 || low >= 0xE000) fail("bad surrogate pair");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    } else if (cp >= 0xD800 && cp < 0xE000) {
                        fail("lone surrogate");
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: fail("bad escape");
            }
        }
    }
};

Json parse(const std::string& line) { return Parser(line).parse_document(); }

void dump_string(const std::string& s, std::string& out) {
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += char(c);
                }
        }
    }
    out += '"';
}

void dump(const Json& j, std::string& out) {
    switch (j.kind) {
        case Json::Kind::Null: out += "null"; break;
        case Json::Kind::Bool: out += j.boolean ? "true" : "false"; break;
        case Json::Kind::Number: out += j.text; break;
        case Json::Kind::String: dump_string(j.text, out); break;
        case Json::Kind::Array:
            out += '[';
            for (std::size_t i = 0; i < j.items.size(); ++i) {
                if (i) out += ',';
                dump(j.items[i], out);
            }
            out += ']';
            break;
        case Json::Kind::Object:
            out += '{';
            for (std::size_t i = 0; i < j.members.size(); ++i) {
                if (i) out += ',';
                dump_string(j.members[i].first, out);
                out += ':';
                dump(j.members[i].second, out);
            }
            out += '}';
            break;
    }
}

std::string dump(const Json& j) {
    std::string out;
    dump(j, out);
    return out;
}

// ---------------------------------------------------------------------------
// The bot: choose an action from the observation and the legal actions.
// ---------------------------------------------------------------------------

std::mt19937_64 rng;

// Seeds rng with 256 bits of the operating system's entropy (random_device
// asks the kernel: getrandom), which no other seat sees. A seed made of the
// match id, which every seat is sent, would let an opponent replay every
// draw. CARDROOM_BOT_SEED, set by hand, replays your draws while you debug.
void seed_rng() {
    if (const char* chosen = std::getenv("CARDROOM_BOT_SEED")) {
        std::string text(chosen);
        std::seed_seq seed(text.begin(), text.end());
        rng.seed(seed);
        return;
    }
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device(), device(), device(), device(), device()};
    rng.seed(seed);
}

std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

// Allegory's `distribute` is listed once as a template
// {"type": "distribute", "total": B, "cards": [...]}: spread all B chips
// over the Pool's cards (cards left out get none).
Json fill_distribute(const Json& tmpl) {
    const Json& cards = tmpl["cards"];
    std::map<std::string, long long> count;
    std::vector<std::string> order;  // first-chosen first, as the Python starter does
    for (long long i = 0; i < tmpl["total"].integer(); ++i) {
        std::string card = cards[pick(cards.size())].str();
        if (count[card]++ == 0) order.push_back(card);
    }
    Json chips = Json::object();
    for (const auto& card : order) chips.set(card, Json::integer_value(count[card]));
    Json action = Json::object();
    action.set("type", Json::string("distribute"));
    action.set("chips", chips);
    return action;
}

// Your bot's brain: given what the seat sees and the legal actions, return
// one of them. observation["game"].str() says which game ("allegory" or
// "allegra"); see docs/protocol.md for every key of the observation.
Json choose(const Json& observation, const Json& legal) {
    (void)observation;  // a random bot needs none of it: yours will
    const Json& action = legal[pick(legal.size())];
    if (action["type"].str() == "distribute") return fill_distribute(action);
    return action;  // every other entry of `legal` is a complete action
}

// ---------------------------------------------------------------------------
// Protocol v1: read a line, answer a line.
// ---------------------------------------------------------------------------

void send(const Json& message) {
    std::cout << dump(message) << '\n' << std::flush;  // flush: the platform waits for the whole line
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        Json message;
        try {
            message = parse(line);
        } catch (const std::exception& err) {
            std::cerr << err.what() << ": line skipped\n";
            continue;
        }
        const std::string type = message["type"].str();
        if (type == "start") {
            seed_rng();
            std::cerr << message["game"].str() << ", seat " << dump(message["seat"]) << " of "
                      << dump(message["num_players"]) << ", " << dump(message["time"]["per_move_ms"]) << " ms a move\n";
            Json ready = Json::object();
            ready.set("type", Json::string("ready"));
            send(ready);
        } else if (type == "act") {
            const Json& legal = message["legal"];
            Json action;
            try {
                action = choose(message["observation"], legal);
            } catch (const std::exception& err) {
                // A bug in choose should not forfeit the match: log it, play the first legal action.
                std::cerr << "choose failed: " << err.what() << "\n";
                action = legal[0]["type"].str() == "distribute" ? fill_distribute(legal[0]) : legal[0];
            }
            Json reply = Json::object();
            reply.set("type", Json::string("action"));
            reply.set("action", action);
            send(reply);
        } else if (type == "end") {
            std::cerr << "match over: scores " << dump(message["result"]["scores"]) << ", ranks "
                      << dump(message["result"]["ranks"]) << "\n";
            return 0;
        } else {
            std::cerr << "unknown message type " << dump(message["type"]) << ", ignored\n";
        }
    }
    return 0;
}
