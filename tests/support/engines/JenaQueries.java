import java.nio.file.*;
import java.util.concurrent.TimeUnit;
import org.apache.jena.query.*;
import org.apache.jena.tdb2.TDB2Factory;
import org.apache.jena.tdb2.TDB2;

/**
 * Every query file in one JVM over a TDB2 database (union default graph). Per file it prints
 * "### FILE", the SPARQL JSON results and "### seconds S" (evaluation: the rows are copied
 * into memory before they are printed, so the time is the engine's, not the printing's).
 * A query that fails (an OutOfMemoryError included: its rows are dropped and collected)
 * prints "### error FILE" and its message instead, and the next query still runs. With
 * -Dhc.timeout=SECONDS a query still running after that long is cancelled (Jena's own query
 * timeout) and reported the same way.
 */
public class JenaQueries {
  public static void main(String[] args) throws Exception {
    Dataset ds = TDB2Factory.connectDataset(args[0]);
    long timeout = Long.getLong("hc.timeout", 0L);
    for (int i = 1; i < args.length; i++) {
      String text = Files.readString(Path.of(args[i]));
      ResultSetRewindable rows = null;
      double seconds = 0;
      ds.begin(ReadWrite.READ);
      try {
        QueryExecutionDatasetBuilder b = QueryExecution.dataset(ds).query(text).set(TDB2.symUnionDefaultGraph, true);
        if (timeout > 0) { b = b.timeout(timeout, TimeUnit.SECONDS); }
        try (QueryExecution qe = b.build()) {
          long t0 = System.nanoTime();
          rows = ResultSetFactory.copyResults(qe.execSelect());
          seconds = (System.nanoTime() - t0) / 1e9;
        }
      } catch (Throwable e) {
        rows = null;
        System.out.println("### error " + args[i]);
        System.out.println(String.valueOf(e).replace('\n', ' '));
      } finally { ds.end(); }
      if (rows != null) {
        System.out.println("### " + args[i]);
        ResultSetFormatter.outputAsJSON(System.out, rows);
        System.out.println("### seconds " + seconds);
      }
      System.out.flush();
    }
  }
}
