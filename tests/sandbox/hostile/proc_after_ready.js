// What node reads of /proc once the bot is ready (decision 267): at its
// third move it logs "node KEY VALUE" for what the os module reads from the
// static texts, and process.memoryUsage(), which reads /proc/self/stat
// (the bot's own, bound there), and plays on.
"use strict";
const os = require("os");
const { play, say } = require("./node_bot.js");

function attempt(read) {
  try {
    return String(read());
  } catch (err) {
    return err.code || String(err);
  }
}

play(async () => {
  say(`node cpus ${attempt(() => os.cpus().length)}`);
  say(`node totalmem ${attempt(() => os.totalmem())}`);
  say(`node loadavg ${attempt(() => os.loadavg().join(","))}`);
  say(`node uptime ${attempt(() => os.uptime())}`);
  say(`node rss ${attempt(() => process.memoryUsage().rss)}`);
  say(`node maxrss ${attempt(() => process.resourceUsage().maxRSS)}`);
});
