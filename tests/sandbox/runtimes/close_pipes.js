// A node bot that closes its stdout (argument "stdout") or its stdin
// (argument "stdin", then says so on stdout) and keeps running.
const fs = require("fs");
if (process.argv[2] === "stdin") {
  fs.closeSync(0);
  fs.writeSync(1, "closed\n");
} else {
  fs.writeSync(1, "hi\n");
  fs.closeSync(1);
}
setTimeout(() => {}, 60000);
