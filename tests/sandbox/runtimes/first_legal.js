// A node test bot: answers every "act" with the first entry of "legal".
// Before "ready" it reads its own file with fs.readFile (libuv's thread pool,
// or io_uring where libuv tries it: the seccomp filter refuses io_uring, and
// libuv must fall back cleanly) and reports its limits and runtime on stderr.
"use strict";
const fs = require("fs");
const readline = require("readline");

function report() {
  const limits = fs.readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max address space"));
  let wasm = "ok";
  try {
    new WebAssembly.Memory({ initial: 1 });
  } catch (e) {
    wasm = String(e);
  }
  process.stderr.write(`node ${process.version}; ${limits.replace(/\s+/g, " ")}; wasm ${wasm}; heap limit ${require("v8").getHeapStatistics().heap_size_limit}; threads ${fs.readdirSync("/proc/self/task").length}\n`);
}

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "start") {
    fs.readFile(__filename, (err, data) => {
      process.stderr.write(`read own file: ${err ? err.code : data.length + " bytes"}\n`);
      report();
      process.stdout.write(JSON.stringify({ type: "ready" }) + "\n");
    });
  } else if (message.type === "act") {
    process.stdout.write(JSON.stringify({ type: "action", action: message.legal[0] }) + "\n");
  } else {
    rl.close();
  }
});
