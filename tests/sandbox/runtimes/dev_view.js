// What a node bot sees of /dev, /etc and the root, and what it can do there:
// one JSON object on stdout (tests/sandbox/test_dev.py). It tries to create,
// remove and change entries of /dev: it refuses to run anywhere but as pid 1
// of a sandbox, never on a host.
const fs = require("fs");

if (process.pid !== 1 || process.getuid() === 0) {
  process.stderr.write(`dev_view: not in a sandbox (pid ${process.pid}): refusing to touch /dev\n`);
  process.exit(2);
}
const mine = (st) => (st.uid === process.getuid() ? 1 : 0);
const list = (folder) => {
  try {
    return fs.readdirSync(folder);
  } catch (e) {
    return [];
  }
};
const attempt = (action) => {
  try {
    action();
    return "ok";
  } catch (e) {
    return e.code;
  }
};
const out = { dev: {} };
for (const name of list("/dev")) {
  const path = `/dev/${name}`;
  const st = fs.lstatSync(path);
  if (st.isCharacterDevice()) {
    out.dev[name] = ["chr", st.mode & 0o7777, Math.floor(st.rdev / 256) & 0xfff, st.rdev & 0xff, mine(st)];
  } else if (st.isSymbolicLink()) {
    out.dev[name] = ["lnk", fs.readlinkSync(path), mine(st)];
  } else if (st.isDirectory()) {
    out.dev[name] = ["dir", mine(st)];
  } else {
    out.dev[name] = ["other", mine(st)];
  }
}
out.etc = list("/etc");
out.root = list("/");
out.dist_packages = list("/usr/lib/python3/dist-packages");
out.pts = list("/dev/pts");
out.create = attempt(() => fs.closeSync(fs.openSync("/dev/x", "wx")));
out.mkdir = attempt(() => fs.mkdirSync("/dev/d"));
out.symlink = attempt(() => fs.symlinkSync("/tmp", "/dev/l"));
out.unlink = attempt(() => fs.unlinkSync("/dev/null"));
out.chmod = attempt(() => fs.chmodSync("/dev", 0o777));
out.null = attempt(() => fs.writeFileSync("/dev/null", "x"));
const buf = Buffer.alloc(16);
const fd = fs.openSync("/dev/urandom", "r");
out.urandom = fs.readSync(fd, buf, 0, 16, null);
out.ptmx = attempt(() => fs.openSync("/dev/ptmx", "r+"));
out.shm_write = attempt(() => fs.writeFileSync("/dev/shm/x", "x"));
const shm = fs.statfsSync("/dev/shm");
out.shm = [shm.blocks * shm.bsize, shm.files];
const devMount = fs
  .readFileSync("/proc/self/mountinfo", "utf8")
  .split("\n")
  .map((line) => line.split(" "))
  .find((fields) => fields[4] === "/dev");
out.dev_readonly = devMount && devMount[5].split(",").includes("ro") ? 1 : 0;
process.stdout.write(JSON.stringify(out) + "\n");
