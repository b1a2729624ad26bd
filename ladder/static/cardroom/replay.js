/* cardroom replay viewer.
 *
 * The server re-plays the match through the rules engine and sends, per
 * event, the chosen view's observation and a line describing the event
 * (GET <frames-url>?view=full|seat-N). This script only draws frames: it
 * knows how a table looks, not how the games are played. In a seat view the
 * frames hold nothing that seat did not know, so nothing hidden can reach
 * the page.
 */
(function () {
  "use strict";

  // The document and frame being drawn (the viewer's, or the play page's).
  var cur = { doc: null, i: 0 };

  // ------------------------------------------------------------ helpers
  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] === null || attrs[k] === undefined || attrs[k] === false) continue;
        if (k === "text") el.textContent = String(attrs[k]);
        else if (k === "class") el.className = attrs[k];
        else el.setAttribute(k, attrs[k]);
      }
    }
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(el, c); }); return; }
    el.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  function name(seat) { return cur.doc.names[seat]; }
  function shortName(seat) { var p = cur.doc.players[seat]; return "S" + seat + " · " + p.name; }
  function pill(text, cls) { return h("span", { "class": "pill " + (cls || ""), text: text }); }
  function cap(s) { return s ? s.charAt(0).toUpperCase() + s.slice(1) : s; }

  // ------------------------------------------------------------ Allegory
  var TALES = ["nature", "energy", "spirit"];

  function tcard(card, opts) {
    opts = opts || {};
    var parts = card.split(":");
    var theme = parts[0], value = parts[1];
    var tale = cur.doc.card_tales ? cur.doc.card_tales[card] : "";
    return h("div", { "class": "tcard" + (opts.small ? " small" : "") + (opts.mark ? " mark" : ""), "data-card": card, title: cap(theme) + " " + value + (tale ? " · " + cap(tale) + " Tale" : "") },
      h("span", { "class": "theme theme-" + theme, text: theme }),
      h("span", { "class": "val", text: value }),
      h("span", { "class": "tale", text: tale }),
      opts.chips ? h("span", { "class": "chips", title: opts.chips + " chips on this card", "data-chips": String(opts.chips), text: String(opts.chips) }) : null);
  }

  function allegory(f) {
    var o = f.obs, doc = cur.doc, over = o.phase === "over";
    var marks = f.mark || [];
    var felt = h("div", { "class": "felt allegory-table", "data-phase": o.phase });
    var bar = h("div", { "class": "status-bar" },
      h("span", null, h("b", { text: o.round === 1 ? "Prologue" : "Round " + o.round }), o.round === 1 ? "" : " (Story)"),
      h("span", { text: "phase: " + o.phase }),
      o.high_bid ? h("span", null, "high bid ", h("b", { text: String(o.high_bid) }), " by " + shortName(o.high_bidder)) : h("span", { text: "no bid yet" }),
      h("span", { text: "deck: " + o.deck_size + " card" + (o.deck_size === 1 ? "" : "s") + (o.deck_top ? " (next: " + cap(o.deck_top.replace(":", " ")) + ")" : "") }),
      o.to_act && o.to_act.length ? h("span", null, "to act: ", h("b", { text: shortName(o.to_act[0]) })) : null);
    felt.appendChild(bar);
    felt.appendChild(h("h4", { text: "Inspiration Pool" }));
    var pool = h("div", { "class": "pool", "data-testid": "pool" });
    o.pool.forEach(function (p) { pool.appendChild(tcard(p.card, { chips: p.chips, mark: marks.indexOf(p.card) >= 0 })); });
    if (!o.pool.length) pool.appendChild(h("span", { "class": "muted", text: "(empty)" }));
    felt.appendChild(pool);

    var players = h("div", { "class": "players" });
    var breakdown = o.breakdown || null;
    o.players.forEach(function (p) {
      var s = p.seat;
      var moral = null;
      if (o.morals) moral = o.morals[s];
      else if (o.seat === s) moral = o.moral;
      var cls = "player" + (o.to_act && o.to_act.indexOf(s) >= 0 ? " to-act" : "") + (p.rested ? " rested" : "") + (o.seat === s ? " me" : "");
      var head = h("div", { "class": "player-head" },
        h("span", { "class": "who", text: name(s) }),
        h("span", null,
          pill((p.chips - p.bid) + " chips in hand", ""), " ",
          p.bid ? pill("bid " + p.bid, "blue") : null, " ",
          p.rested ? pill("Rested", "red") : null, " ",
          o.winner === s ? pill("round winner", "gold") : null));
      var moralLine = h("div", { "class": "small", "data-moral-seat": String(s) },
        "Moral: ", moral ? h("b", { "class": "moral", "data-moral": moral, text: cap(moral) }) : h("span", { "class": "muted-light", text: "hidden" }),
        o.seat === s && !over ? " (yours, secret)" : "");
      var box = h("div", { "class": cls, "data-seat": String(s) }, head, moralLine);
      var lowest = breakdown ? breakdown[s].lowest_tale : null;
      TALES.forEach(function (t) {
        var cards = p.tales[t] || [];
        var total = cards.reduce(function (acc, c) { return acc + parseInt(c.split(":")[1], 10); }, 0);
        var row = h("div", { "class": "tale-row" + (breakdown && total === lowest ? " lowest" : ""), "data-tale": t },
          h("span", { "class": "tale-name", text: t }),
          h("span", { "class": "tale-cards" }, cards.map(function (c) { return tcard(c, { small: true, mark: marks.indexOf(c) >= 0 && f.by === s }); })),
          h("span", { "class": "tale-total", title: "Tale total", text: String(total) }));
        box.appendChild(row);
      });
      players.appendChild(box);
    });
    felt.appendChild(h("h4", { text: "Players" }));
    felt.appendChild(players);

    if (over && breakdown) {
      var ranks = doc.result.ranks;
      var order = breakdown.map(function (b, k) { return k; }).sort(function (a, b) { return ranks[a] - ranks[b] || a - b; });
      var tbody = h("tbody");
      var anyIncomplete = false;
      order.forEach(function (s) {
        var b = breakdown[s];
        if (!b.complete) anyIncomplete = true;
        tbody.appendChild(h("tr", { "data-seat": String(s) },
          h("td", { "class": "num", text: String(ranks[s]) }),
          h("td", { text: shortName(s) }),
          h("td", { text: o.morals ? cap(o.morals[s]) : "" }),
          h("td", { "class": "num", text: String(b.tale_totals.nature) }),
          h("td", { "class": "num", text: String(b.tale_totals.energy) }),
          h("td", { "class": "num", text: String(b.tale_totals.spirit) }),
          h("td", { "class": "num", text: String(b.lowest_tale) + (b.complete ? "" : "*") }),
          h("td", { "class": "num", text: "+" + b.theme_bonus }),
          h("td", { "class": "num", text: "+" + b.moral_bonus }),
          h("td", { "class": "num strong", "data-final-score": String(s), text: String(b.score) }),
          h("td", { "class": "num", text: String(o.players[s].chips) })));
      });
      felt.appendChild(h("div", { "class": "final-box", "data-testid": "final" },
        h("h4", { text: "Final score = lowest Tale + Theme sets (2 per three of a theme) + Moral bonus (1 per Tale with the Moral)" }),
        h("div", { "class": "table-scroll" },
          h("table", { "class": "scores-table breakdown" },
            h("thead", null, h("tr", null, [["Rank", 1], ["Player"], ["Moral"], ["Nature", 1], ["Energy", 1], ["Spirit", 1], ["Lowest", 1], ["Sets", 1], ["Moral", 1], ["Score", 1], ["Chips", 1]].map(function (t) { return h("th", { "class": t[1] ? "num" : null, text: t[0] }); }))),
            tbody)),
        anyIncomplete ? h("p", { "class": "small", text: "* a Tale is empty: this player cannot win (ranked after every player with three Tales)." }) : null));
    }
    return felt;
  }

  // ------------------------------------------------------------ Allegra
  function vclass(v) { return v < 0 ? "v-neg" : v <= 3 ? "v-low" : v <= 7 ? "v-mid" : "v-high"; }
  function slotKey(s, r, c) { return s + "," + r + "," + c; }

  // A slot as the protocol writes it: [seat, row, column], all from 0.
  function slotLabel(key) { return key ? "slot [" + key.split(",").join(", ") + "]" : ""; }

  function pcard(v, opts) {
    opts = opts || {};
    var cls = "pcard" + (opts.small ? " small" : "");
    var where = opts.slot ? " · " + slotLabel(opts.slot) : "";
    var attrs = { "data-slot": opts.slot || null };
    if (v === null || v === undefined) {
      attrs["class"] = cls + " empty" + (opts.gone ? " gone" : "");
      attrs["data-face"] = "empty";
      attrs.title = (opts.gone ? "left the table (triple)" : "empty slot") + where;
      return h("div", attrs);
    }
    if (v === "?") {
      attrs["class"] = cls + " back" + (opts.mark ? " mark" : "");
      attrs["data-face"] = "down";
      attrs.title = "face down" + where;
      return h("div", attrs);
    }
    if (opts.faceDown) {  // full view: a face-down card whose value the spectator may see
      attrs["class"] = cls + " back known" + (opts.mark ? " mark" : "");
      attrs["data-face"] = "down";
      attrs["data-value"] = String(v);
      attrs.title = "face down: " + v + where;
      attrs.text = String(v);
      return h("div", attrs);
    }
    attrs["class"] = cls + " " + vclass(v) + (opts.mark ? " mark" : "");
    attrs["data-face"] = "up";
    attrs["data-value"] = String(v);
    if (where) attrs.title = v + where;
    attrs.text = String(v);
    return h("div", attrs);
  }

  function allegra(f) {
    var o = f.obs, doc = cur.doc, n = o.num_players;
    var faceDown = {};
    (o.face_down || []).forEach(function (sl) { faceDown[slotKey(sl[0], sl[1], sl[2])] = true; });
    var marked = {};
    (f.mark || []).forEach(function (sl) { marked[slotKey(sl[0], sl[1], sl[2])] = true; });
    if (o.placed) marked[slotKey(o.placed[0], o.placed[1], o.placed[2])] = true;
    var gone = {};
    (f.gone || []).forEach(function (sl) { gone[slotKey(sl[0], sl[1], sl[2])] = true; });
    var phaseLabel = o.phase === "deal" ? (o.round_scores.length >= f.round ? "round over" : "reshuffle") : o.phase;

    var felt = h("div", { "class": "felt allegra-table", "data-phase": o.phase, "data-n": String(n) });
    felt.appendChild(h("div", { "class": "status-bar" },
      h("span", null, h("b", { text: "Round " + f.round }), " of 3"),
      h("span", { text: "phase: " + phaseLabel }),
      o.phase !== "over" && o.phase !== "deal" ? h("span", null, "turn: ", h("b", { text: shortName(o.active) })) : null,
      o.final_turns && o.ender !== null ? pill("last turns: " + shortName(o.ender) + " ended the round", "gold") : null,
      o.removed_count ? h("span", { text: o.removed_count + " card" + (o.removed_count === 1 ? "" : "s") + " gone in triples this round" }) : null));

    function cell(s, r, c) {
      var key = slotKey(s, r, c);
      return pcard(o.grids[s][r][c], { slot: key, faceDown: faceDown[key], mark: marked[key], gone: gone[key] });
    }
    // Seats right to left (n-1 … 0): seat s's column 3 then sits right
    // next to seat s-1's column 0, the way it is part of seat s-1's area.
    // Seat 0's column 3 also belongs to seat n-1's area: a copy of it opens the row.
    // (Rows and columns are numbered from 0, as in the protocol's slots.)
    var grids = h("div", { "class": "allegra-grids", "data-testid": "grids" });
    var ghost = h("div", { "class": "agrid ghost", title: name(0) + "'s column 3 again: it is also part of " + name(n - 1) + "'s area" },
      h("div", { "class": "agrid-head" }, h("span", { "class": "who", text: "S0" })),
      h("div", { "class": "agrid-body" },
        [0, 1, 2].map(function (r) { var c = pcard(o.grids[0][r][3], { faceDown: faceDown[slotKey(0, r, 3)], mark: marked[slotKey(0, r, 3)], gone: gone[slotKey(0, r, 3)] }); c.classList.add("ghost-card"); c.removeAttribute("data-slot"); return c; })),
      h("div", { "class": "agrid-foot" }, h("span", { "class": "shared-label", text: "col 3 ↻" })));
    grids.appendChild(ghost);
    for (var s = n - 1; s >= 0; s--) {
      var knocked = (o.knockers || []).indexOf(s) >= 0;
      var answers = o.answers ? o.answers[s] : null;
      var isActive = o.active === s && o.phase !== "over" && o.phase !== "deal";
      var head = h("div", { "class": "agrid-head" },
        h("span", { "class": "who", title: name(s), text: shortName(s) }),
        h("span", null,
          isActive ? pill("turn", "gold") : null,
          knocked ? pill("knocks", "blue") : null,
          answers === "pass" ? pill("passes", "") : null,
          o.knocker === s ? pill("given the card", "blue") : null,
          o.ender === s ? pill("ender", "red") : null,
          o.seat === s ? pill("you", "") : null));
      var body = h("div", { "class": "agrid-body" });
      for (var r = 0; r < 3; r++) {
        for (var c = 0; c < 4; c++) {
          var el = cell(s, r, c);
          if (c === 3) el.classList.add("shared");
          body.appendChild(el);
        }
      }
      var block = h("div", { "class": "agrid" + (isActive ? " active" : "") + (o.seat === s ? " me" : ""), "data-seat": String(s) },
        head, body,
        h("div", { "class": "agrid-foot" },
          h("span", { "class": "game-score", "data-game-score": String(s), title: "the rounds scored so far in this game, not the cards on this grid", text: "game score so far: " + o.scores[s] }),
          h("span", { "class": "shared-label", text: "col 3 shared with " + (s === 0 ? "S" + (n - 1) + " ↻" : "S" + (s - 1)), title: "this column is also part of " + name(s === 0 ? n - 1 : s - 1) + "'s area" })));
      grids.appendChild(block);
    }
    felt.appendChild(grids);
    // A seat's area (what it scores, where it swaps and makes triples): its
    // own four columns and the gold column just left of its grid, the next
    // seat's column 3 (the ghost for the last seat). Lit for your seat on the
    // play page, else for the seat to act; hovering or focusing a grid
    // lights that seat's instead.
    var areaNote = h("span", { "data-testid": "area-now" });
    function lightArea(a) {
      var next = (a + 1) % n;
      grids.querySelectorAll(".in-area").forEach(function (el) { el.classList.remove("in-area"); });
      grids.querySelectorAll(".agrid.area-of").forEach(function (el) { el.classList.remove("area-of"); });
      grids.querySelectorAll(".agrid[data-seat='" + a + "'] .pcard, .agrid[data-seat='" + next + "'] .pcard.shared" + (a === n - 1 ? ", .agrid.ghost .pcard" : ""))
        .forEach(function (el) { el.classList.add("in-area"); });
      var own = grids.querySelector(".agrid[data-seat='" + a + "']");
      if (own) own.classList.add("area-of");
      areaNote.textContent = "S" + a + "'s area now lit: S" + a + "'s columns 0–3 and S" + next + "'s column 3.";
    }
    var home = o.seat !== undefined && o.seat !== null ? o.seat : (typeof o.active === "number" ? o.active : 0);
    grids.querySelectorAll(".agrid[data-seat]").forEach(function (g) {
      var a = Number(g.getAttribute("data-seat"));
      g.tabIndex = 0;
      g.addEventListener("mouseenter", function () { lightArea(a); });
      g.addEventListener("focus", function () { lightArea(a); });
      g.addEventListener("mouseleave", function () { lightArea(home); });
      g.addEventListener("blur", function () { lightArea(home); });
    });
    lightArea(home);
    felt.appendChild(h("p", { "class": "area-help", "data-testid": "area-help" },
      h("b", { text: "Shared columns: " }),
      "each seat's column 3 (ringed in gold) belongs to two areas: its own and the seat to its right's. " +
      "A seat's area, which it scores and where it swaps and makes triples, is its own four columns plus the gold column just left of its grid. ",
      areaNote, " Hover over or tab to a grid to light its area."));
    felt.appendChild(h("p", { "class": "slot-note", "data-testid": "slot-note", text: "Rows 0–2 (top to bottom) and columns 0–3 (left to right), numbered as in the protocol's slots [seat, row, column]." }));

    // Deck, discard pile, drawn and held cards.
    var center = h("div", { "class": "center-row" });
    center.appendChild(h("div", { "class": "pile", "data-testid": "deck" },
      h("h4", { text: "Deck" }),
      o.deck_size ? pcard("?") : pcard(null),
      h("span", { "class": "count", text: o.deck_size + " card" + (o.deck_size === 1 ? "" : "s") + (o.deck_top !== undefined && o.deck_top !== null ? " · next " + o.deck_top : "") })));
    var top = o.discard.slice(-5);
    center.appendChild(h("div", { "class": "pile", "data-testid": "discard" },
      h("h4", { text: "Discard" }),
      h("div", { "class": "stack" }, top.length ? top.map(function (v) { return pcard(v); }) : pcard(null)),
      h("span", { "class": "count", text: o.discard.length + " card" + (o.discard.length === 1 ? "" : "s") + (o.discard.length ? " · top " + o.discard[o.discard.length - 1] : "") })));
    if (o.drawn !== null && o.drawn !== undefined) {
      center.appendChild(h("div", { "class": "pile", "data-testid": "drawn" },
        h("h4", { text: "Drawn" }), pcard(o.drawn, { mark: true }),
        h("span", { "class": "count", text: "by " + shortName(o.active) })));
    }
    if (o.held) {
      center.appendChild(h("div", { "class": "pile", "data-testid": "held" },
        h("h4", { text: "In hand" }), pcard(o.held.card),
        h("span", { "class": "count", text: "held by " + shortName(o.held.seat) })));
    }
    if (o.phase === "knock" || (o.knockers && o.knockers.length)) {
      center.appendChild(h("div", { "class": "pile" }, h("h4", { text: "Knocks" }),
        h("span", { text: o.knockers && o.knockers.length ? o.knockers.map(shortName).join(", ") : (o.phase === "knock" ? "answers are secret until all are in" : "none") })));
    }
    // Round scores (with the ender and the doubling) and totals.
    var ends = doc.roundEnds.filter(function (e) { return e.frame <= cur.i; });
    var thead = h("tr", null, h("th", { text: "Player" }), ends.map(function (e) { return h("th", { "class": "num", text: "R" + e.info.round }); }), h("th", { "class": "num", text: "Total" }));
    var tbody = h("tbody");
    for (var p = 0; p < n; p++) {
      tbody.appendChild(h("tr", { "data-seat": String(p) },
        h("td", { text: shortName(p) }),
        ends.map(function (e) {
          var info = e.info, isEnder = info.ender === p;
          return h("td", { "class": "num" + (isEnder ? " ender" : "") + (isEnder && info.doubled ? " dbl" : ""),
            title: isEnder ? (info.doubled ? "ended the round and is doubled: " + info.raw[p] + " × 2" : "ended the round") : "area total",
            text: (isEnder && info.doubled ? info.raw[p] + "×2=\u200b" : "") + info.scores[p] });
        }),
        h("td", { "class": "num strong", "data-total": String(p), text: String(o.scores[p]) })));
    }
    center.appendChild(h("div", { "class": "pile scores" }, h("h4", { text: "Scores (lowest wins)" }),
      h("div", { "class": "table-scroll" }, h("table", { "class": "scores-table", "data-testid": "scores" }, h("thead", null, thead), tbody))));
    felt.appendChild(center);

    if (o.phase === "over") {
      var ranks = doc.result.ranks;
      var order = o.scores.map(function (v, k) { return k; }).sort(function (a, b) { return ranks[a] - ranks[b] || a - b; });
      felt.appendChild(h("div", { "class": "final-box", "data-testid": "final" },
        h("h4", { text: "Final result after three rounds" }),
        h("table", { "class": "scores-table" },
          h("thead", null, h("tr", null, h("th", { text: "Rank" }), h("th", { text: "Player" }), h("th", { "class": "num", text: "Total" }))),
          h("tbody", null, order.map(function (k) {
            return h("tr", null, h("td", { text: String(ranks[k]) }), h("td", { text: name(k) }), h("td", { "class": "num strong", "data-final-score": String(k), text: String(o.scores[k]) }));
          })))));
    }
    return felt;
  }

  // Where each Allegra round was scored (the score table's columns).
  function indexRoundEnds(doc) {
    doc.roundEnds = [];
    doc.frames.forEach(function (f, k) { if (f.round_end) doc.roundEnds.push({ frame: k, info: f.round_end }); });
    return doc;
  }
  // Frame i of a frames document as the table: the viewer's drawing, shared
  // with the play page (ladder/static/cardroom/play.js), which adds its moves.
  function drawTable(doc, i) {
    cur.doc = doc;
    cur.i = i;
    var f = doc.frames[i];
    return TABLES[doc.game](f);
  }
  // Each game's table and round names, keyed by the engine's game ids
  // (tests/web/test_frames.py holds the keys to engine.game_ids()).
  var TABLES = { allegory: allegory, allegra: allegra };
  var ROUND_NAMES = {
    allegory: function (r) { return r === 1 ? "Prologue" : "Round " + r; },
    allegra: function (r) { return "Round " + r; },
  };
  window.CardroomTable = { draw: drawTable, indexRoundEnds: indexRoundEnds, h: h, cardLabel: function (card) { var p = card.split(":"); return cap(p[0]) + " " + p[1]; } };

  var root = document.getElementById("replay");
  if (!root) return;

  var framesUrl = root.getAttribute("data-frames-url");
  var $ = function (sel) { return root.querySelector(sel); };
  var ui = {
    event: $("[data-ctl=event]"),
    round: $("[data-ctl=round]"),
    speed: $("[data-ctl=speed]"),
    view: $("[data-ctl=view]"),
    play: $("[data-act=play]"),
    eventOut: $("[data-out=event]"),
    text: $("[data-out=text]"),
    table: $("[data-out=table]"),
    log: $("[data-out=log]"),
  };
  var docs = {};
  var st = { doc: null, view: "full", i: 0, playing: false, timer: null, speed: 1 };

  // ------------------------------------------------------------ loading
  function load(view) {
    if (docs[view]) return Promise.resolve(docs[view]);
    return fetch(framesUrl + "?view=" + encodeURIComponent(view), { credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) return r.json().then(function (d) { throw new Error(d.detail || ("HTTP " + r.status)); });
        return r.json();
      })
      .then(function (doc) {
        indexRoundEnds(doc);
        docs[view] = doc;
        return doc;
      });
  }

  var viewRequest = 0;
  function setView(view, index) {
    stop();
    ui.text.textContent = "Loading…";
    root.setAttribute("aria-busy", "true");
    var mine = ++viewRequest;
    return load(view).then(function (doc) {
      // A later view change won the race: this answer is stale.
      if (mine !== viewRequest) return;
      st.doc = doc;
      st.view = view;
      ui.view.value = view;
      ui.event.max = String(doc.frames.length - 1);
      buildRounds();
      buildLog();
      root.removeAttribute("aria-busy");
      root.setAttribute("data-view", view);
      go(index === undefined ? st.i : index);
    }).catch(function (err) {
      if (mine !== viewRequest) return;
      root.removeAttribute("aria-busy");
      ui.text.textContent = "The replay could not be loaded: " + err.message;
    });
  }

  function buildRounds() {
    ui.round.innerHTML = "";
    st.doc.rounds.forEach(function (r) {
      ui.round.appendChild(h("option", { value: String(r.frame), text: ROUND_NAMES[st.doc.game](r.round) }));
    });
  }

  // The event log lists the events up to the one shown, never later ones
  // (in a seat's view a later event may tell what the seat did not know yet).
  var logItems = [];
  function buildLog() {
    ui.log.innerHTML = "";
    logItems = st.doc.frames.map(function (f, k) {
      return h("li", { "data-i": String(k), "class": f.forfeit ? "forfeit" : null }, h("span", { "class": "ix", text: String(k) }), f.text);
    });
  }
  function syncLog() {
    var want = st.i + 1;
    var have = ui.log.children.length;
    if (have > want) {
      while (ui.log.children.length > want) ui.log.removeChild(ui.log.lastChild);
    } else if (have < want) {
      var frag = document.createDocumentFragment();
      for (var k = have; k < want; k++) frag.appendChild(logItems[k]);
      ui.log.appendChild(frag);
    }
  }

  // ------------------------------------------------------------ navigation
  function go(i) {
    var n = st.doc.frames.length;
    st.i = Math.max(0, Math.min(n - 1, i | 0));
    render();
  }
  function stop() {
    st.playing = false;
    if (st.timer) clearTimeout(st.timer);
    st.timer = null;
    ui.play.querySelector(".play-label").textContent = "Play";
    ui.play.setAttribute("aria-label", "Play");
    root.removeAttribute("data-playing");
  }
  function play() {
    if (!st.doc) return;
    if (st.i >= st.doc.frames.length - 1) go(0);
    st.playing = true;
    ui.play.querySelector(".play-label").textContent = "Pause";
    ui.play.setAttribute("aria-label", "Pause");
    root.setAttribute("data-playing", "1");
    schedule();
  }
  function schedule() {
    if (!st.playing) return;
    st.timer = setTimeout(function () {
      if (st.i >= st.doc.frames.length - 1) { stop(); return; }
      go(st.i + 1);
      schedule();
    }, 800 / st.speed);
  }

  root.addEventListener("click", function (e) {
    var btn = e.target.closest("[data-act]");
    if (btn && st.doc) {
      var act = btn.getAttribute("data-act");
      if (act === "play") { st.playing ? stop() : play(); return; }
      stop();
      if (act === "first") go(0);
      else if (act === "last") go(st.doc.frames.length - 1);
      else if (act === "back") go(st.i - 1);
      else if (act === "forward") go(st.i + 1);
      return;
    }
    var li = e.target.closest("li[data-i]");
    if (li && st.doc) { stop(); go(parseInt(li.getAttribute("data-i"), 10)); }
  });
  ui.event.addEventListener("input", function () { stop(); go(parseInt(ui.event.value, 10)); });
  ui.round.addEventListener("change", function () { stop(); go(parseInt(ui.round.value, 10)); });
  ui.speed.addEventListener("change", function () { st.speed = parseFloat(ui.speed.value) || 1; });
  ui.view.addEventListener("change", function () { setView(ui.view.value, st.i); });
  document.addEventListener("keydown", function (e) {
    if (!st.doc || e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea") return;
    if (e.key === "ArrowRight") { stop(); go(st.i + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { stop(); go(st.i - 1); e.preventDefault(); }
    else if (e.key === " " && tag !== "button") { st.playing ? stop() : play(); e.preventDefault(); }
    else if (e.key === "Home") { stop(); go(0); e.preventDefault(); }
    else if (e.key === "End") { stop(); go(st.doc.frames.length - 1); e.preventDefault(); }
  });

  // ------------------------------------------------------------ rendering
  function render() {
    var doc = st.doc, f = doc.frames[st.i];
    ui.event.value = String(st.i);
    // The event's own number, from 0 like the slider, the log, #event=N and the replay file's events.
    ui.eventOut.textContent = st.i + " of 0–" + (doc.frames.length - 1);
    root.setAttribute("data-event", String(st.i));
    root.setAttribute("data-last", st.i === doc.frames.length - 1 ? "1" : "0");
    ui.text.textContent = f.text;
    ui.text.classList.toggle("forfeit", !!f.forfeit);
    var roundFrame = 0;
    doc.rounds.forEach(function (r) { if (r.frame <= st.i) roundFrame = r.frame; });
    ui.round.value = String(roundFrame);
    var prev = ui.log.querySelector("li.current");
    if (prev) prev.classList.remove("current");
    syncLog();
    var currentItem = ui.log.children[st.i];
    if (currentItem) currentItem.classList.add("current");
    scheduleAfterRender();
    ui.table.innerHTML = "";
    ui.table.appendChild(drawTable(doc, st.i));
  }

  // Scrolling the log and updating the address (#event=N&view=V, so a
  // position can be linked) wait for the next frame, and for the address a
  // quiet moment: stepping fast does not force a layout or flood history.
  var rafPending = false, hashTimer = null;
  function scheduleAfterRender() {
    if (!rafPending) {
      rafPending = true;
      requestAnimationFrame(function () { rafPending = false; ui.log.scrollTop = ui.log.scrollHeight; });
    }
    clearTimeout(hashTimer);
    hashTimer = setTimeout(function () {
      if (history.replaceState) history.replaceState(null, "", "#event=" + st.i + "&view=" + st.view);
    }, 250);
  }

  // ------------------------------------------------------------ start
  function fromHash() {
    var params = {};
    (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
      var p = kv.split("=");
      if (p[0]) params[decodeURIComponent(p[0])] = decodeURIComponent(p[1] || "");
    });
    var view = params.view && ui.view.querySelector('option[value="' + params.view.replace(/[^a-z0-9-]/g, "") + '"]') ? params.view : "full";
    var event = params.event ? parseInt(params.event, 10) || 0 : 0;
    return { view: view, event: event };
  }
  // A link to another position of the same match (#event=N&view=V).
  window.addEventListener("hashchange", function () {
    var want = fromHash();
    if (!st.doc || want.view !== st.view) setView(want.view, want.event);
    else { stop(); go(want.event); }
  });
  var start = fromHash();
  setView(start.view, start.event);
})();
