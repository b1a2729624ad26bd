// The protocol loop of the node hostile bots (fork_bomb.js, memory_hog.js,
// network.js, snooper.js): each is this file's play(attack): answer "start"
// and every "act" with the first legal action, and on the third act run
// attack(targets) (the lines of the file "targets" in the bot's folder). An
// attack that returns "leaked" makes the bot answer an illegal action.
"use strict";
const fs = require("fs");
const readline = require("readline");

function say(text) {
  fs.writeSync(2, text + "\n");
}

function targets() {
  try {
    return fs.readFileSync("targets", "utf8").split("\n").filter((line) => line);
  } catch (e) {
    return [];
  }
}

function play(attack) {
  let moves = 0;
  const rl = readline.createInterface({ input: process.stdin });
  rl.on("line", async (line) => {
    const message = JSON.parse(line);
    if (message.type === "start") {
      process.stdout.write('{"type": "ready"}\n');
    } else if (message.type === "act") {
      moves += 1;
      if (moves === 3) {
        rl.pause();
        if ((await attack(targets())) === "leaked") {
          process.stdout.write('{"type": "action", "action": {"type": "leaked"}}\n');
          return;
        }
      }
      process.stdout.write(JSON.stringify({ type: "action", action: message.legal[0] }) + "\n");
    } else {
      rl.close();
    }
  });
}

module.exports = { play, say };
