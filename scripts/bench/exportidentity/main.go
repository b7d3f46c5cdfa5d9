package main

import (
	"bufio"
	"bytes"
	"flag"
	"log"
	"os"

	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

func main() {
	snap := flag.String("snapshot", "", "snapshot directory")
	flag.Parse()
	st, err := snapshots.Open(*snap, snapshots.OpenOptions{CacheBytes: 64 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	err = st.Scan(kv.TagIdentity, func(k, v []byte) error {
		subject, tenant, _ := bytes.Cut(k, []byte{0})
		if len(tenant) > 0 {
			return nil
		}
		view, err := kv.DecodeView(v)
		if err != nil {
			return err
		}
		w.Write(subject)
		w.WriteByte('\t')
		w.Write(bytes.ReplaceAll(view.Body, []byte(`\`), []byte(`\\`)))
		return w.WriteByte('\n')
	})
	if err != nil {
		log.Fatal(err)
	}
}
