import java.nio.file.*;
import org.apache.jena.query.*;
import org.apache.jena.tdb2.TDB2Factory;
import org.apache.jena.tdb2.TDB2;

public class JenaQueries {
  public static void main(String[] args) throws Exception {
    Dataset ds = TDB2Factory.connectDataset(args[0]);
    for (int i = 1; i < args.length; i++) {
      String text = Files.readString(Path.of(args[i]));
      ds.begin(ReadWrite.READ);
      try (QueryExecution qe = QueryExecution.dataset(ds).query(text).set(TDB2.symUnionDefaultGraph, true).build()) {
        long t0 = System.nanoTime();
        ResultSet rs = qe.execSelect();
        System.out.println("### " + args[i]);
        ResultSetFormatter.outputAsJSON(System.out, rs);
        System.out.println("### seconds " + (System.nanoTime() - t0) / 1e9);
      } finally { ds.end(); }
    }
  }
}
