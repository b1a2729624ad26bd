/* cardroom: "Play against a bot".
 *
 * #play-new: the form that starts a casual match (POST /api/play/).
 * #play: the match from the person's seat. The page polls the seat
 * (GET /api/play/{id}/: the protocol message a bot in that seat would be
 * sent now) and the seat's frames so far (GET /play/{id}/frames/?from=N:
 * the replay viewer's frames, the person's own view), draws each new event
 * with the replay viewer's table (window.CardroomTable, replay.js) one by
 * one, and offers the `act` message's legal actions as things to click;
 * the answer goes back as the protocol's action (POST
 * /api/play/{id}/action/ {action, decision}). The page knows how the
 * actions look, never the rules: what is legal comes from the server.
 */
(function () {
  "use strict";

  var T = window.CardroomTable;
  var h = T.h;

  function csrfToken() {
    var el = document.querySelector("input[name=csrfmiddlewaretoken]");
    return el ? el.value : "";
  }
  // A JSON request with the site's session (and its CSRF token when it writes).
  function call(method, url, body) {
    var opts = { method: method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.headers["X-CSRFToken"] = csrfToken();
      opts.body = JSON.stringify(body);
    }
    return fetch(url, opts).then(function (r) {
      return r.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text.slice(0, 200) }; }
        return { status: r.status, data: data };
      });
    });
  }
  function errorText(res) {
    var d = res.data || {};
    return d.error || d.detail || ("HTTP " + res.status);
  }
  function clockText(seconds) {
    seconds = Math.max(0, Math.round(seconds));
    var hh = Math.floor(seconds / 3600), mm = Math.floor((seconds % 3600) / 60), ss = seconds % 60;
    return (hh ? hh + ":" + (mm < 10 ? "0" : "") : "") + mm + ":" + (ss < 10 ? "0" : "") + ss;
  }

  // ================================================================ the form
  function setupForm(form) {
    var choices = JSON.parse(document.getElementById("play-opponents").textContent);
    var players = form.querySelector("[name=num_players]");
    var seat = form.querySelector("[name=seat]");
    var holder = form.querySelector("[data-out=opponents]");
    var error = form.querySelector("[data-out=error]");
    var kept = {};  // the opponent chosen per position and game, kept across changes

    function game() { return form.querySelector("[name=game]:checked").value; }
    function build() {
      var g = game(), n = parseInt(players.value, 10);
      holder.innerHTML = "";
      for (var k = 1; k < n; k++) {
        var id = "play-opponent-" + k;
        var select = h("select", { id: id, name: "opponent", "data-position": String(k) },
          choices[g].map(function (c) { return h("option", { value: c.value, text: c.label }); }));
        var want = kept[g + ":" + k];
        if (want && select.querySelector('option[value="' + want.replace(/"/g, "") + '"]')) select.value = want;
        holder.appendChild(h("div", { "class": "opponent" }, h("label", { "for": id, text: "Opponent " + k }), select));
      }
      var had = seat.value;
      seat.innerHTML = "";
      seat.appendChild(h("option", { value: "", text: "any (drawn at random)" }));
      for (var s = 0; s < n; s++) seat.appendChild(h("option", { value: String(s), text: "Seat " + s }));
      if (had !== "" && parseInt(had, 10) < n) seat.value = had;
    }
    holder.addEventListener("change", function (e) {
      if (e.target.name === "opponent") kept[game() + ":" + e.target.getAttribute("data-position")] = e.target.value;
    });
    form.addEventListener("change", function (e) { if (e.target.name === "game" || e.target === players) build(); });
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var body = {
        game: game(),
        num_players: parseInt(players.value, 10),
        opponents: Array.prototype.map.call(holder.querySelectorAll("select"), function (s) { return s.value; }),
      };
      if (seat.value !== "") body.seat = parseInt(seat.value, 10);
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      error.hidden = true;
      call("POST", form.getAttribute("data-api-url"), body).then(function (res) {
        if (res.status === 201 && res.data && res.data.id) {
          location.href = form.getAttribute("data-match-url").replace(/\/0\/$/, "/" + res.data.id + "/");
          return;
        }
        button.disabled = false;
        error.textContent = "The match could not be started: " + errorText(res);
        error.hidden = false;
      }).catch(function (err) {
        button.disabled = false;
        error.textContent = "The match could not be started: " + err.message;
        error.hidden = false;
      });
    });
    build();
  }

  // ================================================================ the match
  var POLL_MS = 1000;    // how often the seat is asked for while the match runs
  var FAST_POLL_MS = 100; // ... and just after a move, while the bots answer (in moments)
  var FAST_FOR_MS = 8000;

  function setupMatch(root) {
    var apiUrl = root.getAttribute("data-api-url");
    var framesUrl = root.getAttribute("data-frames-url");
    var mySeat = parseInt(root.getAttribute("data-seat"), 10);
    var moveSeconds = parseInt(root.getAttribute("data-move-seconds"), 10);
    var $ = function (sel) { return root.querySelector(sel); };
    var ui = {
      speed: $("[data-ctl=speed]"),
      turn: $("[data-out=turn]"), clock: $("[data-out=clock]"), text: $("[data-out=text]"),
      moves: $("[data-out=moves]"), table: $("[data-out=table]"), log: $("[data-out=log]"), result: $("[data-out=result]"),
    };
    var st = {
      doc: null, shown: -1, queue: [], animating: false,
      message: null, decision: null, answered: null, status: null, forfeit: null, offered: null, deadline: null, resultShown: undefined,
      posting: false, polling: false, over: false, slotMode: null, exchangeTake: null, distribution: null,
      fastUntil: 0, stepMs: 700,
    };
    // How long each other player's move stays on the table before the next (the person's choice, kept).
    try { var kept = localStorage.getItem("cardroom.play.step"); if (kept !== null && ui.speed.querySelector('option[value="' + parseInt(kept, 10) + '"]')) ui.speed.value = String(parseInt(kept, 10)); } catch (e) { /* no storage */ }
    st.stepMs = parseInt(ui.speed.value, 10) || 0;
    ui.speed.addEventListener("change", function () {
      st.stepMs = parseInt(ui.speed.value, 10) || 0;
      try { localStorage.setItem("cardroom.play.step", String(st.stepMs)); } catch (e) { /* no storage */ }
    });

    // ------------------------------------------------------------ polling
    function poll() {
      if (st.polling || st.over) return;
      st.polling = true;
      call("GET", apiUrl).then(function (res) {
        if (res.status !== 200) throw new Error(errorText(res));
        var seatState = res.data;
        var changed = seatState.decision !== st.decision || seatState.status !== st.status;
        // An answer to a poll sent before our move may still show the move as awaited.
        var answered = seatState.decision === st.answered && seatState.message && seatState.message.type === "act";
        st.message = answered ? null : seatState.message;
        st.decision = seatState.decision;
        if (st.doc && st.message && st.message.type === "end") st.doc.result = st.message.result;
        st.status = seatState.status;
        st.forfeit = seatState.forfeit;
        if (seatState.move_time_left_ms !== null && seatState.move_time_left_ms !== undefined && st.offered !== st.decision) {
          st.deadline = Date.now() + seatState.move_time_left_ms;
        }
        // The events so far are recorded with each message the seat is sent
        // (and the replay at the end): new ones come with a new decision or status.
        if (changed || !st.doc) return fetchFrames();
      }).then(function () {
        st.polling = false;
        advance();
      }).catch(function (err) {
        st.polling = false;
        ui.turn.textContent = "The connection to the table failed (" + err.message + "); trying again…";
      });
    }
    function fetchFrames() {
      var have = st.doc ? st.doc.frames.length : 0;
      return call("GET", framesUrl + "?from=" + have).then(function (res) {
        if (res.status !== 200) throw new Error(errorText(res));
        var d = res.data, incoming = d.frames;
        var opening = !st.doc;
        if (opening) {
          st.doc = d;
          st.doc.frames = [];
          root.setAttribute("data-game", d.game);
        }
        // The final scores drawn on the last frame need the result: from the
        // end message, or from the replay (a seat that forfeited gets no end).
        st.doc.result = d.result || (st.message && st.message.type === "end" ? st.message.result : st.doc.result);
        if (d.start !== st.doc.frames.length) return;  // another answer got in first
        incoming.forEach(function (f) { st.doc.frames.push(f); st.queue.push(st.doc.frames.length - 1); });
        T.indexRoundEnds(st.doc);
        // A page opened on a match under way shows where it stands, not its history again.
        if (opening && st.queue.length > 1) st.queue.splice(0, st.queue.length - 1).forEach(logFrame);
      });
    }
    function schedulePoll() { setTimeout(function () { poll(); }, Date.now() < st.fastUntil ? FAST_POLL_MS : POLL_MS); }

    // ------------------------------------------------------------ the table, event by event
    function advance() {
      if (st.animating) return;
      if (st.queue.length) {
        // The final table shows the final scores: it waits for the result (the end message).
        if (st.doc.frames[st.queue[0]].obs.phase === "over" && !st.doc.result) { schedulePoll(); return; }
        var i = st.queue.shift();
        draw(i);
        var f = st.doc.frames[i];
        // The person's own moves and what came of them show at once; others' moves one by one.
        var wait = f.by === mySeat || !st.queue.length ? 0 : st.stepMs;
        st.animating = true;
        setTimeout(function () { st.animating = false; advance(); }, wait);
        return;
      }
      settle();
    }
    function draw(i) {
      st.shown = i;
      var f = st.doc.frames[i];
      ui.text.textContent = f.text;
      ui.text.classList.toggle("forfeit", !!f.forfeit);
      if (i >= ui.log.children.length) {
        var prev = ui.log.querySelector("li.current");
        if (prev) prev.classList.remove("current");
        logFrame(i).classList.add("current");
        ui.log.scrollTop = ui.log.scrollHeight;
      }
      if (root.getAttribute("data-event") !== String(i)) {
        root.setAttribute("data-by", String(f.by));
        root.setAttribute("data-queued", String(st.queue.length));
        root.setAttribute("data-event", String(i));
      }
      if (st.offered !== null) offerMoves();  // the table with its choices
      else drawTable();
    }
    function logFrame(i) {
      var f = st.doc.frames[i];
      return ui.log.appendChild(h("li", { "data-i": String(i), "class": f.forfeit ? "forfeit" : null }, h("span", { "class": "ix", text: String(i) }), f.text));
    }
    // The table afresh (a redrawn table holds no choice of an earlier offer).
    function drawTable() {
      ui.table.innerHTML = "";
      ui.table.appendChild(T.draw(st.doc, st.shown));
    }

    // Every event drawn: the person's turn, the end, or waiting for the others.
    var DONE = { finished: true, failed: true, cancelled: true };
    function settle() {
      var m = st.message, done = DONE[st.status] === true;
      var result = m && m.type === "end" ? m.result : st.doc && st.doc.result;
      if (result && (done || (m && m.type === "end"))) {
        if (st.resultShown === undefined) finish(result);
        // The replay is stored once the worker has recorded the match.
        if (done) showLinks(); else schedulePoll();
        return;
      }
      if (done) {
        st.over = true;
        hideMoves();
        root.setAttribute("data-state", "over");
        ui.turn.textContent = "This match ended without a result (" + st.status + ").";
        return;
      }
      if (m && m.type === "act" && st.doc && st.shown === st.doc.frames.length - 1 && sameMoment(m.observation, st.doc.frames[st.shown].obs)) {
        if (st.offered !== st.decision) {
          st.offered = st.decision;
          st.slotMode = null;
          st.exchangeTake = null;
          st.distribution = null;
          if (st.deadline === null) st.deadline = Date.now() + moveSeconds * 1000;
          offerMoves();
        }
        st.fastUntil = 0;  // the bots have answered: the page now only keeps the seat alive
        root.setAttribute("data-state", "your-turn");
        ui.turn.textContent = "Your move.";
      } else {
        hideMoves();
        root.setAttribute("data-state", st.status === "queued" || !st.doc || !st.doc.frames.length ? "starting" : "waiting");
        ui.turn.textContent = !st.doc || !st.doc.frames.length ? "The table is being set up…" : "The other players are playing…";
      }
      tickClock();
      schedulePoll();
    }
    // The act message and the last frame describe the same moment of the game.
    function sameMoment(a, b) {
      return a.round === b.round && a.phase === b.phase && JSON.stringify(a.to_act) === JSON.stringify(b.to_act);
    }

    // ------------------------------------------------------------ the clock
    setInterval(tickClock, 1000);
    function tickClock() {
      if (st.over || st.offered === null || st.offered !== st.decision || !st.message || st.message.type !== "act") {
        ui.clock.textContent = "";
        return;
      }
      var left = st.deadline === null ? moveSeconds : (st.deadline - Date.now()) / 1000;
      var total = st.message.time_left_ms / 1000;
      ui.clock.textContent = "Your clock: " + clockText(Math.min(left, total)) + " for this move (" + clockText(total) + " left in all).";
      ui.clock.classList.toggle("low", left < 60);
    }

    // ------------------------------------------------------------ sending a move
    function send(action) {
      if (st.posting || st.answered === st.decision) return;
      var decision = st.decision;
      st.posting = true;
      root.setAttribute("aria-busy", "true");
      setMovesDisabled(true);
      call("POST", apiUrl + "action/", { action: action, decision: decision }).then(function (res) {
        st.posting = false;
        root.removeAttribute("aria-busy");
        if (res.status === 200) {
          st.answered = decision;
          st.message = null;
          st.deadline = null;
          st.fastUntil = Date.now() + FAST_FOR_MS;
          hideMoves();
          root.setAttribute("data-state", "waiting");
          ui.turn.textContent = "Move sent.";
          poll();
          return;
        }
        setMovesDisabled(false);
        if (res.status === 409) {  // answered already (another tab) or the match moved on
          hideMoves();
          ui.turn.textContent = "That move was not taken: " + errorText(res);
          poll();
          return;
        }
        showNote("That move was refused: " + errorText(res));
      }).catch(function (err) {
        st.posting = false;
        root.removeAttribute("aria-busy");
        setMovesDisabled(false);
        showNote("The move could not be sent (" + err.message + "): try again.");
      });
    }
    function showNote(text) {
      var note = ui.moves.querySelector("[data-out=note]");
      if (!note) { note = h("p", { "class": "move-note", "data-out": "note", role: "alert" }); ui.moves.appendChild(note); }
      note.textContent = text;
    }
    function setMovesDisabled(off) {
      Array.prototype.forEach.call(ui.moves.querySelectorAll("button, input"), function (el) { el.disabled = off; });
      root.classList.toggle("sending", off);
    }
    function hideMoves() {
      st.offered = null;
      ui.moves.innerHTML = "";
      ui.moves.hidden = true;
      if (st.doc && st.shown >= 0) drawTable();
    }
    function button(label, action, cls) {
      var b = h("button", { type: "button", "class": "move " + (cls || ""), "data-action": JSON.stringify(action), "data-action-type": action.type, text: label });
      b.addEventListener("click", function () { send(action); });
      return b;
    }
    // A card or slot of the table as a choice (clicked, or Enter/Space on it).
    function choice(el, label, onPick) {
      el.classList.add("choice");
      el.setAttribute("role", "button");
      el.setAttribute("tabindex", "0");
      el.setAttribute("aria-label", label);
      el.title = label;
      el.addEventListener("click", onPick);
      el.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onPick(); } });
    }

    // ------------------------------------------------------------ the moves on offer
    function offerMoves() {
      var m = st.message;
      if (!m || m.type !== "act") return;
      drawTable();
      ui.moves.innerHTML = "";
      ui.moves.hidden = false;
      ui.moves.setAttribute("data-decision", String(st.decision));
      // each game's move controls, keyed by the engine's game ids (tests/web/test_frames.py)
      var MOVES = { allegory: allegoryMoves, allegra: allegraMoves };
      MOVES[st.doc.game](m.observation, m.legal);
    }

    // Allegory: bids (raise or rest, a Rest may claim a card), the winner's take and distribution.
    function allegoryMoves(o, legal) {
      var bids = legal.filter(function (a) { return a.type === "bid"; }).map(function (a) { return a.amount; });
      var rests = legal.filter(function (a) { return a.type === "rest"; });
      var takes = legal.filter(function (a) { return a.type === "take"; });
      var template = legal.filter(function (a) { return a.type === "distribute"; })[0];
      var label = T.cardLabel;
      if (bids.length) {
        var lo = Math.min.apply(null, bids), hi = Math.max.apply(null, bids);
        var input = h("input", { type: "number", min: String(lo), max: String(hi), value: String(lo), "data-ctl": "bid", "aria-label": "Your new total bid" });
        var bidButton = h("button", { type: "button", "class": "move", "data-action-type": "bid", text: "Bid " + lo });
        var current = function () { var v = parseInt(input.value, 10); return isNaN(v) ? lo : Math.max(lo, Math.min(hi, v)); };
        var sync = function () { bidButton.textContent = "Bid " + current(); bidButton.setAttribute("data-action", JSON.stringify({ type: "bid", amount: current() })); };
        var step = function (d) { return function () { input.value = String(Math.max(lo, Math.min(hi, current() + d))); sync(); }; };
        input.addEventListener("input", sync);
        bidButton.addEventListener("click", function () { send({ type: "bid", amount: current() }); });
        sync();
        ui.moves.appendChild(h("div", { "class": "move-group bid-group" },
          h("span", { "class": "move-label", text: "Raise the high bid (" + (o.high_bid || 0) + ") to" }),
          h("span", { "class": "stepper" },
            h("button", { type: "button", "class": "step ghost", "aria-label": "One less", text: "−" }),
            input,
            h("button", { type: "button", "class": "step ghost", "aria-label": "One more", text: "+" }),
            bidButton)));
        var steps = ui.moves.querySelectorAll(".bid-group .step");
        steps[0].addEventListener("click", step(-1));
        steps[1].addEventListener("click", step(1));
      }
      if (rests.length) {
        var group = h("div", { "class": "move-group" });
        rests.forEach(function (a) {
          if (!a.claim) group.appendChild(button(bids.length ? "Pass (Rest)" : "Rest", a));
          else {
            group.appendChild(button("Rest and claim " + label(a.claim), a));
            poolCard(a.claim, "Rest and claim " + label(a.claim), a);
          }
        });
        ui.moves.appendChild(group);
      }
      if (takes.length) {
        ui.moves.appendChild(h("div", { "class": "move-group" },
          h("span", { "class": "move-label", text: "You won the round: take a card from the Pool." }),
          takes.map(function (a) { poolCard(a.card, "Take " + label(a.card), a); return button("Take " + label(a.card), a); })));
      }
      if (template) distributeMoves(template);
    }
    function poolCard(card, text, action) {
      var el = ui.table.querySelector('.pool .tcard[data-card="' + card + '"]');
      if (el) choice(el, text, function () { send(action); });
    }
    // The winner's whole bid spread over the Pool's cards: + and − per card, then one action.
    function distributeMoves(template) {
      var chips = st.distribution || {};
      template.cards.forEach(function (c) { if (!(c in chips)) chips[c] = 0; });
      st.distribution = chips;
      var placed = function () { return template.cards.reduce(function (n, c) { return n + chips[c]; }, 0); };
      var left = h("span", { "class": "move-label", "data-out": "chips-left" });
      var payButton = h("button", { type: "button", "class": "move", "data-action-type": "distribute", text: "Pay out" });
      var rows = template.cards.map(function (c) {
        var input = h("input", { type: "number", min: "0", max: String(template.total), value: String(chips[c]), "data-card": c, "aria-label": "Chips on " + T.cardLabel(c) });
        var minus = h("button", { type: "button", "class": "step ghost", "data-step": "-1", "aria-label": "One chip less on " + T.cardLabel(c), text: "−" });
        var plus = h("button", { type: "button", "class": "step ghost", "data-step": "1", "aria-label": "One chip more on " + T.cardLabel(c), text: "+" });
        var set = function (v) { chips[c] = Math.max(0, Math.min(template.total, v | 0)); input.value = String(chips[c]); sync(); };
        minus.addEventListener("click", function () { set(chips[c] - 1); });
        plus.addEventListener("click", function () { if (placed() < template.total) set(chips[c] + 1); });
        input.addEventListener("input", function () { set(parseInt(input.value, 10) || 0); });
        return h("div", { "class": "dist-row", "data-dist-card": c }, h("span", { "class": "dist-card", text: T.cardLabel(c) }), minus, input, plus);
      });
      function sync() {
        var n = placed(), rest = template.total - n;
        left.textContent = rest === 0 ? "All " + template.total + " chips placed." : rest > 0 ? rest + " of " + template.total + " chips still to place." : (-rest) + " chips too many.";
        payButton.disabled = rest !== 0 || st.posting;
        var action = { type: "distribute", chips: {} };
        template.cards.forEach(function (c) { if (chips[c]) action.chips[c] = chips[c]; });
        payButton.setAttribute("data-action", JSON.stringify(action));
      }
      payButton.addEventListener("click", function () { send(JSON.parse(payButton.getAttribute("data-action"))); });
      ui.moves.appendChild(h("div", { "class": "move-group dist-group", "data-testid": "distribute" },
        h("span", { "class": "move-label", text: "Pay your bid of " + template.total + " out over the Pool's cards:" }),
        rows, left, payButton));
      sync();
    }

    // Allegra: slots of the table to click (reveal, take the discard, swap,
    // discard and turn up, place, exchange) and buttons (draw, knock, pass, give).
    var SLOT_MODES = {
      reveal: "Turn a card of your area face up",
      take_discard: "Take the discard into a slot",
      swap: "Swap the drawn card into a slot",
      discard: "Discard it and turn a card up",
      place: "Place the given card into a slot",
      exchange: "Exchange: a card of the knocker's area, then a slot of yours",
    };
    function slotKey(sl) { return sl[0] + "," + sl[1] + "," + sl[2]; }
    function slotOf(a) { return a.slot || a.flip || a.take || null; }
    function allegraMoves(o, legal) {
      var slotActs = legal.filter(function (a) { return slotOf(a) !== null; });
      var buttons = legal.filter(function (a) { return slotOf(a) === null; });
      var modes = [];
      slotActs.forEach(function (a) { if (modes.indexOf(a.type) < 0) modes.push(a.type); });
      if (st.slotMode === null || modes.indexOf(st.slotMode) < 0) st.slotMode = modes[0] || null;
      var group = h("div", { "class": "move-group" });
      buttons.forEach(function (a) {
        var text = a.type === "draw" ? "Draw from the deck"
          : a.type === "knock" ? "Knock (ask for the " + o.drawn + ")"
          : a.type === "pass" ? "Pass"
          : a.type === "give" ? "Give the " + o.drawn + " to " + st.doc.names[a.to]
          : a.type === "discard" ? "Discard the " + o.drawn
          : a.type;
        group.appendChild(button(text, a));
      });
      if (modes.length > 1) {
        modes.forEach(function (mode) {
          var b = h("button", { type: "button", "class": "mode" + (mode === st.slotMode ? " on" : " ghost"), "aria-pressed": mode === st.slotMode ? "true" : "false", "data-mode": mode, text: SLOT_MODES[mode] || mode });
          b.addEventListener("click", function () { st.slotMode = mode; st.exchangeTake = null; offerMoves(); });
          group.appendChild(b);
        });
      }
      if (group.childNodes.length) ui.moves.appendChild(group);
      if (st.slotMode) {
        var hint = st.slotMode === "take_discard" ? "Or click a slot of your area to take the " + o.discard[o.discard.length - 1] + " from the discard pile into it."
          : st.slotMode === "exchange" ? (st.exchangeTake ? "Now click the slot of your area the card goes to." : "Click the card of the knocker's area you take.")
          : (SLOT_MODES[st.slotMode] || st.slotMode) + ": click a highlighted slot.";
        ui.moves.appendChild(h("p", { "class": "move-label slot-hint", "data-out": "slot-hint", text: hint }));
        markSlots(slotActs.filter(function (a) { return a.type === st.slotMode; }));
      }
    }
    function markSlots(acts) {
      if (st.slotMode === "exchange") {
        if (st.exchangeTake === null) {
          var takes = {};
          acts.forEach(function (a) { takes[slotKey(a.take)] = a.take; });
          Object.keys(takes).forEach(function (key) {
            slotChoice(key, "take this card", function () { st.exchangeTake = key; offerMoves(); });
          });
        } else {
          var picked = slotCell(st.exchangeTake);
          if (picked) picked.classList.add("picked");
          acts.filter(function (a) { return slotKey(a.take) === st.exchangeTake; }).forEach(function (a) {
            slotChoice(slotKey(a.put), "put it here", function () { send(a); });
          });
        }
        return;
      }
      acts.forEach(function (a) {
        slotChoice(slotKey(slotOf(a)), (SLOT_MODES[a.type] || a.type).toLowerCase(), function () { send(a); });
      });
    }
    function slotCell(key) { return ui.table.querySelector('.agrid:not(.ghost) .pcard[data-slot="' + key + '"]'); }
    function slotChoice(key, text, onPick) {
      var el = slotCell(key);
      if (!el) return;
      choice(el, text + " · slot [" + key.split(",").join(", ") + "]", onPick);
      el.setAttribute("data-choice", st.slotMode);
    }

    // ------------------------------------------------------------ the end
    function finish(r) {
      st.resultShown = true;
      hideMoves();
      ui.moves.hidden = true;
      ui.clock.textContent = "";
      root.setAttribute("data-state", "over");
      var me = mySeat, n = r.ranks.length;
      var mine = r.forfeits.filter(function (f) { return f.seat === me; })[0];
      ui.turn.textContent = "The match is over: you finished " + rankText(r.ranks[me], r.ranks) + " of " + n + " with " + r.scores[me] + " points."
        + (mine ? " You forfeited (" + mine.reason + (st.forfeit && st.forfeit.detail ? ": " + st.forfeit.detail : "") + "); the default policy played your seat from event " + mine.event + " on." : "");
      var order = r.ranks.map(function (x, k) { return k; }).sort(function (a, b) { return r.ranks[a] - r.ranks[b] || a - b; });
      ui.result.innerHTML = "";
      ui.result.appendChild(h("h2", { text: "Result" }));
      ui.result.appendChild(h("div", { "class": "table-wrap" }, h("table", { "class": "result", "data-testid": "play-result" },
        h("thead", null, h("tr", null, h("th", { "class": "num", text: "Rank" }), h("th", { text: "Seat" }), h("th", { "class": "num", text: "Score" }), h("th", { text: "Forfeit" }))),
        h("tbody", null, order.map(function (s) {
          var f = r.forfeits.filter(function (x) { return x.seat === s; })[0];
          return h("tr", { "data-seat": String(s), "data-rank": String(r.ranks[s]), "class": s === me ? "me" : null },
            h("td", { "class": "num", text: String(r.ranks[s]) }), h("td", { text: st.doc.names[s] }),
            h("td", { "class": "num strong", "data-score": String(r.scores[s]), text: String(r.scores[s]) }), h("td", { text: f ? f.reason + " at event " + f.event : "–" }));
        })))));
      ui.result.appendChild(h("p", { "class": "play-links", "data-out": "links" }, "The replay is being stored…"));
      ui.result.hidden = false;
      // The table's last frame again, now with the final scores.
      if (st.shown >= 0) draw(st.shown);
    }
    function showLinks() {
      st.over = true;
      var links = ui.result.querySelector("[data-out=links]");
      if (!links || links.getAttribute("data-ready")) return;
      links.innerHTML = "";
      links.setAttribute("data-ready", "1");
      links.appendChild(h("a", { "class": "button small", href: root.getAttribute("data-replay-url"), download: "", "data-testid": "replay-download", text: "Download the replay (JSON)" }));
      links.appendChild(document.createTextNode(" "));
      links.appendChild(h("a", { "class": "button small ghost", href: root.getAttribute("data-viewer-url"), "data-testid": "replay-viewer", text: "Watch it in the replay viewer" }));
      links.appendChild(document.createTextNode(" "));
      links.appendChild(h("a", { "class": "small", href: root.getAttribute("data-again-url"), text: "Play again" }));
      root.setAttribute("data-stored", "1");
    }
    function rankText(rank, ranks) {
      var shared = ranks.filter(function (x) { return x === rank; }).length > 1;
      var suffix = rank % 10 === 1 && rank % 100 !== 11 ? "st" : rank % 10 === 2 && rank % 100 !== 12 ? "nd" : rank % 10 === 3 && rank % 100 !== 13 ? "rd" : "th";
      return (shared ? "joint " : "") + rank + suffix;
    }

    poll();
  }

  var form = document.getElementById("play-new");
  if (form) setupForm(form);
  var root = document.getElementById("play");
  if (root) setupMatch(root);
})();
