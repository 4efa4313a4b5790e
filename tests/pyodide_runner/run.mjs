// Runs notebooks in Pyodide under Node, from a built Checkpoint Lab site (tests/test_site.py).
//
//   node run.mjs SITE JOBS.json DRIVER.py
//
// Pyodide and every package come from the site itself (static/pyodide/, its lockfile), as in the
// browser. Each job's notebook is written into Pyodide's memory filesystem under /drive (where
// the browser kernel sees the notebooks) and DRIVER.py runs them; it prints one JSON line.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [site, jobsFile, driverFile] = process.argv.slice(2);
const folder = path.join(site, "static", "pyodide");
const { loadPyodide } = await import(pathToFileURL(path.join(folder, "pyodide.mjs")).href);
const lock = JSON.parse(fs.readFileSync(path.join(folder, "pyodide-lock.json"), "utf8"));
const pyodide = await loadPyodide({
  indexURL: folder + path.sep,
  packages: Object.keys(lock.packages),
  stdout: (line) => process.stderr.write(line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
});
const jobs = JSON.parse(fs.readFileSync(jobsFile, "utf8"));
for (const job of jobs) {
  const where = "/drive/" + job.relpath;
  pyodide.FS.mkdirTree(path.posix.dirname(where));
  pyodide.FS.writeFile(where, fs.readFileSync(job.file));
  job.path = where;
}
pyodide.globals.set("JOBS_JSON", JSON.stringify(jobs));
const result = await pyodide.runPythonAsync(fs.readFileSync(driverFile, "utf8"));
process.stdout.write(result + "\n");
