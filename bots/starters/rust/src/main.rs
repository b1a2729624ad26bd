// A cardroom starter bot for the `native` runtime: one Rust file, no crates
// (the standard library only). It plays both games (Allegory and Allegra)
// with a uniformly random legal action, filling Allegory's `distribute`
// template chip by chip.
//
// Bot protocol v1 (docs/protocol.md): one JSON object per line on stdin and
// stdout. Write nothing but protocol messages to stdout; log to stderr
// (eprintln!), which the platform keeps for you.
//
// Build:  make              (a static x86-64 binary `bot`: it needs no library at run time)
// Try:    cardroom play allegra bots/starters/rust builtin:random
//
// The file has three parts: a small JSON reader and writer (Json, parse,
// dump), the bot's choice (choose), and the protocol loop (main). It builds
// with Rust 1.63 (Debian 12's rustc) and any newer one.

use std::fmt::Write as _;
use std::io::{self, BufRead, Read, Write};
use std::ops::Index;
use std::panic::{self, AssertUnwindSafe};

// ---------------------------------------------------------------------------
// JSON: a value, a parser for one line, a writer.
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    /// A number as written (so 7 stays 7, not 7.0).
    Number(String),
    Str(String),
    Array(Vec<Json>),
    /// An object's members, in their order.
    Object(Vec<(String, Json)>),
}

static NULL: Json = Json::Null;

impl Json {
    fn string(s: &str) -> Json {
        Json::Str(s.to_string())
    }

    fn integer(n: i64) -> Json {
        Json::Number(n.to_string())
    }

    /// An object of these members, in this order.
    fn object(members: Vec<(&str, Json)>) -> Json {
        Json::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// An array's length or an object's number of members (0 for anything else).
    fn len(&self) -> usize {
        match self {
            Json::Array(items) => items.len(),
            Json::Object(members) => members.len(),
            _ => 0,
        }
    }

    /// A string's characters ("" for anything else).
    fn as_str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            _ => "",
        }
    }

    /// A number as an integer (0 for anything else; 2.5 gives 2).
    fn as_i64(&self) -> i64 {
        match self {
            Json::Number(text) => text
                .parse::<i64>()
                .unwrap_or_else(|_| text.parse::<f64>().map(|x| x as i64).unwrap_or(0)),
            _ => 0,
        }
    }
}

// value["key"]: the member, or null when there is none (never panics).
impl Index<&str> for Json {
    type Output = Json;
    fn index(&self, key: &str) -> &Json {
        if let Json::Object(members) = self {
            for (k, v) in members {
                if k == key {
                    return v;
                }
            }
        }
        &NULL
    }
}

// value[i]: the element, or null when there is none (never panics).
impl Index<usize> for Json {
    type Output = Json;
    fn index(&self, i: usize) -> &Json {
        match self {
            Json::Array(items) if i < items.len() => &items[i],
            _ => &NULL,
        }
    }
}

const MAX_DEPTH: usize = 64; // the platform's messages are far shallower

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("JSON: {} at character {}", what, self.pos))
    }

    fn skip_space(&mut self) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn peek(&self) -> u8 {
        if self.pos < self.s.len() {
            self.s[self.pos]
        } else {
            0
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() != c {
            return self.fail(&format!("expected '{}'", c as char));
        }
        self.pos += 1;
        Ok(())
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, String> {
        for &c in word.as_bytes() {
            self.expect(c)?;
        }
        Ok(value)
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return self.fail("nested too deep");
        }
        self.skip_space();
        match self.peek() {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => Ok(Json::Str(self.string()?)),
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            b'-' | b'0'..=b'9' => Ok(Json::Number(self.number()?)),
            _ => self.fail("unexpected character"),
        }
    }

    /// Skips white space, then takes `c` if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        if self.peek() != c {
            return false;
        }
        self.pos += 1;
        true
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1; // '{'
        let mut members = Vec::new();
        if self.eat(b'}') {
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_space();
            if self.peek() != b'"' {
                return self.fail("expected a key");
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return self.fail("expected ':'");
            }
            members.push((key, self.value(depth + 1)?));
            if self.eat(b'}') {
                return Ok(Json::Object(members));
            }
            if !self.eat(b',') {
                return self.fail("expected ',' or '}'");
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1; // '['
        let mut items = Vec::new();
        if self.eat(b']') {
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.eat(b']') {
                return Ok(Json::Array(items));
            }
            if !self.eat(b',') {
                return self.fail("expected ',' or ']'");
            }
        }
    }

    fn digits(&mut self) -> Result<(), String> {
        let from = self.pos;
        while self.peek().is_ascii_digit() {
            self.pos += 1;
        }
        if self.pos == from {
            return self.fail("expected a digit");
        }
        Ok(())
    }

    fn number(&mut self) -> Result<String, String> {
        let start = self.pos;
        if self.peek() == b'-' {
            self.pos += 1;
        }
        self.digits()?;
        if self.peek() == b'.' {
            self.pos += 1;
            self.digits()?;
        }
        if matches!(self.peek(), b'e' | b'E') {
            self.pos += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.pos += 1;
            }
            self.digits()?;
        }
        // Only ASCII digits and signs were taken: always valid UTF-8.
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    fn hex4(&mut self) -> Result<u32, String> {
        if self.pos + 4 > self.s.len() {
            return self.fail("short \\u escape");
        }
        let mut v = 0;
        for _ in 0..4 {
            let digit = match (self.s[self.pos] as char).to_digit(16) {
                Some(d) => d,
                None => return self.fail("bad \\u escape"),
            };
            self.pos += 1;
            v = (v << 4) | digit;
        }
        Ok(v)
    }

    // After "\u": one escaped character, a surrogate pair taking two escapes.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let mut cp = self.hex4()?;
        if (0xD800..0xDC00).contains(&cp) && self.s[self.pos..].starts_with(b"\\u") {
            self.pos += 2;
            let low = self.hex4()?;
            if !(0xDC00..0xE000).contains(&low) {
                return self.fail("bad surrogate pair");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        match char::from_u32(cp) {
            Some(c) => Ok(c),
            None => self.fail("lone surrogate"), // from_u32 refuses 0xD800..0xE000
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            if self.pos >= self.s.len() {
                return self.fail("unterminated string");
            }
            let c = self.s[self.pos];
            self.pos += 1;
            if c == b'"' {
                break;
            }
            if c != b'\\' {
                out.push(c); // UTF-8 bytes pass through unchanged
                continue;
            }
            if self.pos >= self.s.len() {
                return self.fail("unterminated escape");
            }
            let e = self.s[self.pos];
            self.pos += 1;
            let unescaped = match e {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => self.unicode_escape()?,
                _ => return self.fail("bad escape"),
            };
            let mut buf = [0u8; 4];
            out.extend_from_slice(unescaped.encode_utf8(&mut buf).as_bytes());
        }
        match String::from_utf8(out) {
            Ok(s) => Ok(s),
            Err(_) => self.fail("invalid UTF-8 in a string"),
        }
    }
}

/// One JSON document (a whole line, spaces around it allowed).
fn parse(line: &[u8]) -> Result<Json, String> {
    let mut parser = Parser { s: line, pos: 0 };
    let value = parser.value(0)?;
    parser.skip_space();
    if parser.pos != line.len() {
        return parser.fail("text after the JSON value");
    }
    Ok(value)
}

fn dump_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn dump_into(j: &Json, out: &mut String) {
    match j {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(text) => out.push_str(text),
        Json::Str(s) => dump_string(s, out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                dump_into(item, out);
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                dump_string(key, out);
                out.push(':');
                dump_into(value, out);
            }
            out.push('}');
        }
    }
}

/// The value as compact JSON text, on one line.
fn dump(j: &Json) -> String {
    let mut out = String::new();
    dump_into(j, &mut out);
    out
}

// ---------------------------------------------------------------------------
// The bot: choose an action from the observation and the legal actions.
// ---------------------------------------------------------------------------

/// A small seeded generator (SplitMix64), seeded from a text by FNV-1a.
struct Rng {
    state: u64,
}

impl Rng {
    /// Seeded with 64 bits of the operating system's entropy
    /// (/dev/urandom), which no other seat sees: a seed made of the match
    /// id, which every seat is sent, would let an opponent replay every
    /// draw. CARDROOM_BOT_SEED, set by hand, replays your draws while you
    /// debug.
    fn private() -> Rng {
        if let Ok(chosen) = std::env::var("CARDROOM_BOT_SEED") {
            return Rng::from_text(&chosen);
        }
        let mut bytes = [0u8; 8];
        match std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)) {
            Ok(()) => Rng {
                state: u64::from_le_bytes(bytes),
            },
            Err(err) => panic!("reading /dev/urandom: {}", err),
        }
    }

    fn from_text(text: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in text.as_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng { state: h }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index in 0..n (n > 0): draws below 2^64 mod n are drawn
    /// again, so every index has the same chance.
    fn pick(&mut self, n: usize) -> usize {
        assert!(n > 0, "pick from an empty list");
        let n = n as u64;
        let skip = n.wrapping_neg() % n;
        loop {
            let r = self.next_u64();
            if r >= skip {
                return (r % n) as usize;
            }
        }
    }
}

// Allegory's `distribute` is listed once as a template
// {"type": "distribute", "total": B, "cards": [...]}: spread all B chips
// over the Pool's cards (cards left out get none).
fn fill_distribute(template: &Json, rng: &mut Rng) -> Json {
    let cards = &template["cards"];
    let mut count: Vec<(String, i64)> = Vec::new(); // first-chosen first, as the Python starter does
    for _ in 0..template["total"].as_i64() {
        let card = cards[rng.pick(cards.len())].as_str();
        match count.iter_mut().find(|(name, _)| name == card) {
            Some((_, n)) => *n += 1,
            None => count.push((card.to_string(), 1)),
        }
    }
    let chips = count
        .into_iter()
        .map(|(card, n)| (card, Json::integer(n)))
        .collect();
    Json::object(vec![
        ("type", Json::string("distribute")),
        ("chips", Json::Object(chips)),
    ])
}

// Your bot's brain: given what the seat sees and the legal actions, return
// one of them. observation["game"].as_str() says which game ("allegory" or
// "allegra"); see docs/protocol.md for every key of the observation.
fn choose(observation: &Json, legal: &Json, rng: &mut Rng) -> Json {
    let _ = observation; // a random bot needs none of it: yours will
    let action = &legal[rng.pick(legal.len())];
    if action["type"].as_str() == "distribute" {
        return fill_distribute(action, rng);
    }
    action.clone() // every other entry of `legal` is a complete action
}

// ---------------------------------------------------------------------------
// Protocol v1: read a line, answer a line.
// ---------------------------------------------------------------------------

fn send(message: &Json) {
    let mut out = io::stdout().lock();
    // flush: the platform waits for the whole line
    let _ = writeln!(out, "{}", dump(message)).and_then(|_| out.flush());
}

fn main() {
    let mut rng = Rng::private();
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) => {}
            Err(err) => {
                eprintln!("reading stdin: {}", err);
                return;
            }
        }
        if line
            .iter()
            .all(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        {
            continue;
        }
        let message = match parse(&line) {
            Ok(message) => message,
            Err(err) => {
                eprintln!("{}: line skipped", err);
                continue;
            }
        };
        match message["type"].as_str() {
            "start" => {
                rng = Rng::private();
                eprintln!(
                    "{}, seat {} of {}, {} ms a move",
                    message["game"].as_str(),
                    dump(&message["seat"]),
                    dump(&message["num_players"]),
                    dump(&message["time"]["per_move_ms"])
                );
                send(&Json::object(vec![("type", Json::string("ready"))]));
            }
            "act" => {
                let legal = &message["legal"];
                let chosen = panic::catch_unwind(AssertUnwindSafe(|| {
                    choose(&message["observation"], legal, &mut rng)
                }));
                let action = match chosen {
                    Ok(action) => action,
                    Err(_) => {
                        // A bug in choose should not forfeit the match: Rust has written
                        // the panic's message to stderr; play the first legal action.
                        eprintln!("choose failed: playing the first legal action");
                        if legal[0]["type"].as_str() == "distribute" {
                            fill_distribute(&legal[0], &mut rng)
                        } else {
                            legal[0].clone()
                        }
                    }
                };
                send(&Json::object(vec![
                    ("type", Json::string("action")),
                    ("action", action),
                ]));
            }
            "end" => {
                eprintln!(
                    "match over: scores {}, ranks {}",
                    dump(&message["result"]["scores"]),
                    dump(&message["result"]["ranks"])
                );
                return;
            }
            _ => eprintln!("unknown message type {}, ignored", dump(&message["type"])),
        }
    }
}
