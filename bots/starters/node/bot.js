#!/usr/bin/env node
// A cardroom starter bot for the `node` runtime: plain JavaScript, no npm
// packages. It plays both games (Allegory and Allegra) with a uniformly
// random legal action, filling Allegory's `distribute` template chip by chip.
//
// Bot protocol v1 (docs/protocol.md): one JSON object per line on stdin and
// stdout. Write nothing but protocol messages to stdout; log to stderr
// (console.error), which the platform keeps for you.
//
// Try it locally:   cardroom play allegra bots/starters/node builtin:random
"use strict";

const crypto = require("node:crypto");
const readline = require("node:readline");

// A small seeded generator (mulberry32), for debugging only: its 32 bits of
// state are too few to keep from an opponent that searches them.
function seededRandom(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  }
  return function random() {
    h = (h + 0x6d2b79f5) >>> 0;
    let t = h;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A uniform index below n. By default from the operating system's entropy
// (crypto.randomInt: the kernel's getrandom), which no other seat sees; a
// seed made of the match id, which every seat is sent, would let an opponent
// replay every draw. CARDROOM_BOT_SEED, set by hand, replays your draws while
// you debug.
const chosenSeed = process.env.CARDROOM_BOT_SEED;
const index = chosenSeed === undefined
  ? (n) => crypto.randomInt(n)
  : ((random) => (n) => Math.floor(random() * n))(seededRandom(chosenSeed));

function pick(list) {
  return list[index(list.length)];
}

// Allegory's `distribute` is listed once as a template
// {"type": "distribute", "total": B, "cards": [...]}: spread all B chips
// over the Pool's cards (cards left out get none).
function fillDistribute(template) {
  const chips = {};
  for (let i = 0; i < template.total; i++) {
    const card = pick(template.cards);
    chips[card] = (chips[card] || 0) + 1;
  }
  return { type: "distribute", chips };
}

// Your bot's brain: given what the seat sees and the legal actions, return
// one of them. `observation.game` says which game ("allegory" or "allegra").
function choose(observation, legal) {
  const action = pick(legal);
  if (action.type === "distribute") {
    return fillDistribute(action);
  }
  return action; // every other entry of `legal` is a complete action
}

function send(message) {
  // On Linux, writes to a pipe are synchronous in Node: the line is out
  // before the next message is read.
  process.stdout.write(JSON.stringify(message) + "\n");
}

const input = readline.createInterface({ input: process.stdin, terminal: false });

input.on("line", (line) => {
  if (line.trim() === "") return;
  let message;
  try {
    message = JSON.parse(line);
  } catch (err) {
    console.error(`not JSON, skipped: ${line.slice(0, 200)}`);
    return;
  }
  switch (message.type) {
    case "start":
      console.error(`${message.game}, seat ${message.seat} of ${message.num_players}, ` +
        `${message.time?.per_move_ms} ms a move`);
      send({ type: "ready" });
      break;
    case "act": {
      let action;
      try {
        action = choose(message.observation, message.legal);
      } catch (err) {
        // A bug in choose should not forfeit the match: log it, play legal[0]
        // (a template needs filling, so fill it).
        console.error(err && err.stack ? err.stack : String(err));
        action = message.legal[0].type === "distribute" ? fillDistribute(message.legal[0]) : message.legal[0];
      }
      send({ type: "action", action });
      break;
    }
    case "end":
      console.error(`match over: scores ${JSON.stringify(message.result?.scores)}, ` +
        `ranks ${JSON.stringify(message.result?.ranks)}`);
      input.close();
      break;
    default:
      console.error(`unknown message type ${JSON.stringify(message.type)}, ignored`);
  }
});
