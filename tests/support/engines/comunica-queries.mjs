// Run SPARQL queries with Comunica over one N-Quads file, loaded once into an N3 store.
// Usage: node comunica-queries.mjs DATA.nq QUERY.rq...  Prints, per query, a line
// "### FILE", its SPARQL JSON results on one line, and "### seconds S".
import { createReadStream, readFileSync } from "node:fs";
import { QueryEngine } from "@comunica/query-sparql-rdfjs";
import { Store, StreamParser } from "n3";

const [data, ...queries] = process.argv.slice(2);
const store = new Store();
await new Promise((resolve, reject) => {
  createReadStream(data)
    .pipe(new StreamParser({ format: "application/n-quads" }))
    .on("data", (quad) => store.addQuad(quad))
    .on("error", reject)
    .on("end", resolve);
});
const engine = new QueryEngine();
for (const file of queries) {
  const started = performance.now();
  const result = await engine.query(readFileSync(file, "utf8"), {
    sources: [store],
    unionDefaultGraph: true,
  });
  const { data: stream } = await engine.resultToString(result, "application/sparql-results+json");
  let text = "";
  for await (const chunk of stream) text += chunk;
  console.log(`### ${file}`);
  console.log(JSON.stringify(JSON.parse(text)));
  console.log(`### seconds ${(performance.now() - started) / 1000}`);
}
