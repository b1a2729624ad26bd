// Hostile node bot: on its third move tries to fill 2 GiB of memory outside
// V8's heap (Buffers, their pages touched, 64 MiB at a time), which no
// RLIMIT_AS bounds for node: the memory cgroup must (expected forfeit: crash,
// killed by the kernel).
"use strict";
const { play, say } = require("./node_bot.js");

play(() => {
  const chunks = [];
  for (let i = 0; i < 32; i++) {
    chunks.push(Buffer.alloc(64 << 20, 120));
    say(`memory hog reached ${64 * chunks.length} MiB`);
  }
  say("HOGGED 2 GiB");
});
