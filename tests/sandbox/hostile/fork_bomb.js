// Hostile node bot: on its third move starts processes without end. The
// sandbox bounds it (RLIMIT_NPROC of its uid, the pids cgroup; node's own
// threads count too): it logs how many started before the first refusal,
// then never answers (expected forfeit: timeout).
"use strict";
const { spawn } = require("child_process");
const { play, say } = require("./node_bot.js");

play(
  () =>
    new Promise(() => {
      let made = 0;
      const children = [];
      const next = () => {
        const child = spawn("/bin/sleep", ["3600"], { stdio: "ignore" });
        child.on("error", (err) => say(`fork refused after ${made} forks: ${err.code}`));
        child.on("spawn", () => {
          made += 1;
          children.push(child);
          setImmediate(next);
        });
      };
      next();
    }),
);
