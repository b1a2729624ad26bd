// Hostile node bot: on its third move tries to read every path of its
// targets file (a folder is listed, a file read), logging each as READ or
// BLOCKED. Anything read: an illegal action (forfeit: illegal_action); all
// blocked: exit status 0 (expected forfeit: exit).
"use strict";
const fs = require("fs");
const { play, say } = require("./node_bot.js");

play((targets) => {
  let leaked = false;
  for (const path of targets) {
    try {
      const what = fs.statSync(path).isDirectory() ? `${fs.readdirSync(path).length} entries` : `${fs.readFileSync(path).length} bytes`;
      say(`READ ${path}: ${what}`);
      leaked = true;
    } catch (err) {
      say(`BLOCKED ${path}: ${err.code}`);
    }
  }
  if (leaked) return "leaked";
  process.exit(0);
});
