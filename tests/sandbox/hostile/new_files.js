// Makes each kind of new file the start-up gate holds back (decision 237)
// that node can make once as it starts, before it answers ready, and again
// at its first move: a Unix socket (a server listening in /tmp) and a child
// process (its pipes); logs "before|after KIND ok|CODE" for each, and plays on.
"use strict";
const net = require("net");
const { spawn } = require("child_process");
const readline = require("readline");
const { say } = require("./node_bot.js");

let sockets = 0;
function listen() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.on("error", (err) => resolve(err.code));
    server.listen(`/tmp/gate-${sockets++}.sock`, () => server.close(() => resolve("ok")));
  });
}

function child() {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn("/cardroom/bot-exec", [], { stdio: ["ignore", "pipe", "ignore"] });
    } catch (err) {
      resolve(err.code);
      return;
    }
    child.on("error", (err) => resolve(err.code));
    child.on("exit", () => resolve("ok"));
  });
}

async function tryAll(when) {
  say(`${when} socket ${await listen()}`);
  say(`${when} child ${await child()}`);
}

// The protocol loop (node_bot.js's play pauses for good after its attack).
async function main() {
  await tryAll("before");
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  let moves = 0;
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const message = JSON.parse(next.value);
    if (message.type === "start") {
      process.stdout.write('{"type": "ready"}\n');
    } else if (message.type === "act") {
      if (++moves === 1) await tryAll("after");
      process.stdout.write(JSON.stringify({ type: "action", action: message.legal[0] }) + "\n");
    } else {
      break;
    }
  }
  process.exit(0);
}

main();
