package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/export"
	"github.com/productdata/pds/internal/buildinfo"
	"github.com/productdata/pds/internal/progress"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/snapshots"
	"golang.org/x/sync/errgroup"
)

// exportBatch is how many rows the snapshot's decoder hands the file's
// writer at once.
const exportBatch = 256

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", "export --snapshot DIR --out FILE.parquet [--quiet]", stderr)
	snapDir := fs.String("snapshot", "", "the snapshot to export (verified as pds serve verifies it)")
	out := fs.String("out", "", "the Parquet file to write (replaced if it exists, only once it is complete)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	cacheMB := fs.Int("cache-mb", 64, "block cache of the snapshot's store, in MiB")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the export to this file (for go tool pprof)")
	if err := parseFlags(fs, args, "snapshot", "out"); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	start := time.Now()
	snap, err := service.OpenSnapshot(*snapDir, snapshots.OpenOptions{CacheBytes: int64(*cacheMB) << 20})
	if err != nil {
		return err
	}
	defer snap.Close()

	tmp, err := os.CreateTemp(filepath.Dir(*out), "."+filepath.Base(*out)+".*.tmp")
	if err != nil {
		return fmt.Errorf("export: cannot write beside %s: %w", *out, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	defer tmp.Close()
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600; the file is for others to read
		return err
	}
	buf := bufio.NewWriterSize(tmp, 1<<20)
	w := export.NewWriter(buf, export.Options{BuildID: snap.Manifest.BuildID, CreatedAt: snap.Manifest.CreatedAt,
		Sources: snap.Sources, Version: buildinfo.Version()})

	var rows atomic.Int64
	if !*quiet {
		stop := progress.Start(0, func(now time.Time) {
			n := rows.Load()
			fmt.Fprintf(stderr, "export: %d products, %.0f products/s\n", n, float64(n)/now.Sub(start).Seconds())
		})
		defer stop()
	}
	// EachPublicProduct reads the snapshot on one goroutine and decodes it on
	// another, which makes the rows too; this one writes them.
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan []export.Row, 4)
	g.Go(func() error {
		defer close(batches)
		batch := make([]export.Row, 0, exportBatch)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]export.Row, 0, exportBatch)
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		err := snap.EachPublicProduct(gctx, func(p *domain.PublicProduct) error {
			batch = batch[:len(batch)+1]
			if err := batch[len(batch)-1].Set(p); err != nil {
				return err
			}
			if len(batch) == exportBatch {
				return send()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		return err
	})
	g.Go(func() error {
		for batch := range batches {
			if err := w.WriteRows(batch); err != nil {
				return err
			}
			rows.Add(int64(len(batch)))
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return fmt.Errorf("export of %s: %w", *snapDir, err)
	}
	sum, err := w.Close()
	if err == nil {
		err = buf.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), *out)
	}
	if err != nil {
		return fmt.Errorf("export: write %s: %w", *out, err)
	}
	info, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "exported %d products of snapshot %s to %s (%d bytes) in %s\n",
		sum.Rows, snap.Manifest.BuildID, *out, info.Size(), roundDuration(time.Since(start)))
	for _, s := range sum.Sources {
		line := fmt.Sprintf("  source %s (%s, %s): cited by %d rows", s.ID, s.Operator, s.LicenceName, s.Rows)
		if s.RowsWithheld > 0 {
			line += fmt.Sprintf(", withheld from %d (its licence permits no redistribution)", s.RowsWithheld)
		}
		if s.AttributionRequired != nil && s.Rows > 0 {
			line += fmt.Sprintf("; attribution: %q", *s.AttributionRequired)
		}
		fmt.Fprintln(stdout, line)
	}
	return nil
}
