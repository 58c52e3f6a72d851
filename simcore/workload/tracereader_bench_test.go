package workload

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// BenchmarkReadAzureMillionRows reads a generated 1,000,000-row trace in
// Azure's format and reports the heap in use at its highest (sampled
// every 50,000 rows): a streaming read holds one row, whatever the
// trace's length.
func BenchmarkReadAzureMillionRows(b *testing.B) {
	const rows = 1_000_000
	path := filepath.Join(b.TempDir(), "azure.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "TIMESTAMP,ContextTokens,GeneratedTokens")
	start := time.Date(2023, 11, 16, 18, 15, 46, 0, time.UTC)
	for i := range rows {
		at := start.Add(time.Duration(i) * 3517 * time.Microsecond)
		fmt.Fprintf(w, "%s,%d,%d\n", at.Format("2006-01-02 15:04:05.0000000"), 100+i%4000, 1+i%700)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	info, _ := os.Stat(path)
	b.SetBytes(info.Size())
	b.ResetTimer()
	var peak uint64
	for range b.N {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		tr, err := OpenTrace(path, "")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if n++; n%50_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse-min(base, ms.HeapInuse))
			}
		}
		tr.Close()
		if n != rows {
			b.Fatalf("%d rows, want %d", n, rows)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e9, "s/read")
}
