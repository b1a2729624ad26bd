// Hostile node bot: on its third move tries a TCP connection to every
// "host port" line of its targets file, logging each as CONNECTED or
// BLOCKED. Any connection: an illegal action (forfeit: illegal_action); all
// blocked: exit status 0 (expected forfeit: exit).
"use strict";
const net = require("net");
const { play, say } = require("./node_bot.js");

function probe(target) {
  const [host, port] = target.split(" ");
  return new Promise((resolve) => {
    let socket;
    try {
      socket = net.connect({ host, port: Number(port) });
    } catch (err) {
      say(`BLOCKED ${host} ${port}: ${err.code || err}`);
      resolve(false);
      return;
    }
    socket.setTimeout(1000, () => socket.destroy(new Error("timed out")));
    socket.on("connect", () => {
      say(`CONNECTED ${host} ${port}`);
      socket.end("hello from a sandboxed bot\n");
      resolve(true);
    });
    socket.on("error", (err) => {
      say(`BLOCKED ${host} ${port}: ${err.code || err.message}`);
      resolve(false);
    });
  });
}

play(async (targets) => {
  let leaked = false;
  for (const target of targets) leaked = (await probe(target)) || leaked;
  if (leaked) return "leaked";
  process.exit(0);
});
