// Run SPARQL queries with Comunica over one N-Quads file, loaded once into an N3 store.
// Usage: node comunica-queries.mjs DATA.nq QUERY.rq...  Prints, per query, a line
// "### FILE", its SPARQL JSON results on one line, and "### seconds S"; a query that fails
// prints "### error FILE" and its message instead, and the next query still runs.
// With HC_TIMEOUT=SECONDS in the environment a query still running after that long is
// stopped: the store and the engine live in a worker thread, which is terminated (a
// long join does not yield to a timer in its own thread) and started again, the data
// parsed again, for the queries after it. HC_HEAP_MB sets the worker's heap (default 8192).
import { createReadStream, readFileSync } from "node:fs";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { QueryEngine } from "@comunica/query-sparql-rdfjs";
import { Store, StreamParser } from "n3";

async function load(data) {
  const store = new Store();
  await new Promise((resolve, reject) => {
    createReadStream(data)
      .pipe(new StreamParser({ format: "application/n-quads" }))
      .on("data", (quad) => store.addQuad(quad))
      .on("error", reject)
      .on("end", resolve);
  });
  return store;
}

async function answer(engine, store, file) {
  const started = performance.now();
  const result = await engine.query(readFileSync(file, "utf8"), {
    sources: [store],
    unionDefaultGraph: true,
  });
  const { data: stream } = await engine.resultToString(result, "application/sparql-results+json");
  let text = "";
  for await (const chunk of stream) text += chunk;
  return { json: JSON.stringify(JSON.parse(text)), seconds: (performance.now() - started) / 1000 };
}

if (!isMainThread) {
  // The worker: load once, then answer each file the main thread sends.
  const store = await load(workerData.data);
  const engine = new QueryEngine();
  parentPort.on("message", async (file) => {
    try {
      parentPort.postMessage({ file, ...(await answer(engine, store, file)) });
    } catch (e) {
      parentPort.postMessage({ file, error: String(e).replace(/\n/g, " ") });
    }
  });
  parentPort.postMessage({ ready: true });
} else {
  const [data, ...queries] = process.argv.slice(2);
  const timeout = Number(process.env.HC_TIMEOUT || 0) * 1000;
  const print = (r) => {
    if (r.error !== undefined) {
      console.log(`### error ${r.file}`);
      console.log(r.error);
    } else {
      console.log(`### ${r.file}`);
      console.log(r.json);
      console.log(`### seconds ${r.seconds}`);
    }
  };
  const start = () =>
    new Promise((resolve, reject) => {
      const w = new Worker(new URL(import.meta.url), {
        workerData: { data },
        // The N3.js store takes ~2.9 KB of heap a quad (10k stories: 13.7 GB).
        resourceLimits: { maxOldGenerationSizeMb: Number(process.env.HC_HEAP_MB || 8192) },
      });
      w.once("message", () => resolve(w));
      w.once("error", reject);
    });
  let worker = await start();
  for (const file of queries) {
    const r = await new Promise((resolve) => {
      const stop = () => resolve({ file, error: `timeout: stopped after ${timeout / 1000} s`, restart: true });
      const timer = timeout ? setTimeout(stop, timeout) : null;
      const done = (m) => {
        if (timer) clearTimeout(timer);
        resolve(m);
      };
      worker.once("message", done);
      worker.once("error", (e) => done({ file, error: String(e).replace(/\n/g, " "), restart: true }));
      worker.postMessage(file);
    });
    print(r);
    if (r.restart) {
      // Stopped, or the worker died (out of memory, say): a fresh one for the rest.
      worker.removeAllListeners();
      await worker.terminate();
      if (file !== queries[queries.length - 1]) worker = await start();
    }
  }
  await worker.terminate();
}
