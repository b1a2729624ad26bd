// Hostile node bot: as it starts (before it answers ready: after that the
// sandbox refuses the pipes a spawn needs, decision 237) it starts
// processes without end. The sandbox bounds it (RLIMIT_NPROC of its uid, the
// pids cgroup; node's own threads count too): it logs how many started
// before the first refusal, and on its third move never answers (expected
// forfeit: timeout).
"use strict";
const { spawn } = require("child_process");
const { play, say } = require("./node_bot.js");

let made = 0;
const children = [];
const next = () => {
  // The node runtime's files hold no sleep(1) (decision 175): bot-exec
  // waiting for its stdio on a socket that never sends (libuv's "pipe" is a
  // socketpair, held open by the parent) is a sleeper of one small process.
  const child = spawn("/cardroom/bot-exec", ["--stdio-socket=0", "--", "/cardroom/bot-exec"], {
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.on("error", (err) => {
    say(`fork refused after ${made} forks: ${err.code}`);
    play(() => new Promise(() => {}));
  });
  child.on("spawn", () => {
    made += 1;
    children.push(child);
    setImmediate(next);
  });
};
next();
