package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/keys"
	"github.com/productdata/pds/quota"
	"github.com/productdata/pds/service"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "serve --snapshot SNAPSHOT_DIR --keys KEYS_FILE --addr HOST:PORT", stderr)
	snapDir := fs.String("snapshot", "", "snapshot directory, or a symbolic link to one (a 'current' pointer that is watched)")
	keysFile := fs.String("keys", "", "keys file written by 'pds keys add'")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	cacheMB := fs.Int("cache-mb", 256, "block cache size in MiB")
	origins := fs.String("allowed-origins", "", "comma-separated Origin values the MCP endpoint accepts besides loopback")
	watch := fs.Duration("watch", 2*time.Second, "how often to check the snapshot pointer for a change (0: only on SIGHUP)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	debugAddr := fs.String("debug-addr", "", "if set, serve Go's /debug/pprof profiles on this (loopback) address")
	pubKeyPath := fs.String("pubkey", "", "minisign public key every snapshot must be signed with, at start and at every swap (see pds snapshot)")
	usagePath := fs.String("usage", "", "file that keeps quota usage across restarts (default: the keys file + \".usage\")")
	if err := parseFlags(fs, args, "snapshot", "keys", "addr"); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %v", errUsage, err)
	}
	logOut := newLogWriter(stderr, 100*time.Millisecond)
	defer logOut.Close()
	log := slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: level}))

	pubKey, err := optionalKey(*pubKeyPath)
	if err != nil {
		return err
	}
	openOpts := service.OpenOptions{CacheBytes: int64(*cacheMB) << 20, PublicKey: pubKey}
	snap, err := service.OpenSnapshot(*snapDir, openOpts)
	if err != nil {
		return err
	}
	ks, err := keys.Load(*keysFile)
	if err != nil {
		snap.Close()
		return err
	}
	if ks.Len() == 0 {
		log.Warn("the keys file holds no key; every call will be refused", "keys", *keysFile)
	}
	if *usagePath == "" {
		*usagePath = *keysFile + ".usage"
	}
	meter, err := quota.Open(*usagePath, nil)
	if err != nil {
		snap.Close()
		return err
	}
	flushUsage := func() {
		if err := meter.Flush(); err != nil {
			log.Error("quota usage not saved", "usage", *usagePath, "error", err.Error())
		}
	}
	defer flushUsage()
	svc := service.New(snap, ks, meter, log)
	defer svc.Close()
	var allowed []string
	for _, o := range strings.Split(*origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			allowed = append(allowed, o)
		}
	}
	handler := pdshttp.New(svc, log, newMCP(svc, log, allowed))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	reload := func(reason string) {
		if next, err := keys.Load(*keysFile); err != nil {
			log.Error("keys not reloaded; the previous keys stay in force", "error", err.Error())
		} else {
			svc.SetKeys(next)
			log.Info("keys reloaded", "keys", next.Len(), "reason", reason)
		}
		swapIfChanged(svc, *snapDir, openOpts, log, reason == "SIGHUP")
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	log.Info("serving", "addr", ln.Addr().String(), "snapshot", snap.Dir, "build_id", snap.Manifest.BuildID,
		"input_digest", snap.Manifest.InputDigest, "keys", ks.Len())
	flushTick := time.NewTicker(time.Second)
	defer flushTick.Stop()
	var tick <-chan time.Time
	if *watch > 0 {
		t := time.NewTicker(*watch)
		defer t.Stop()
		tick = t.C
	}
	if *debugAddr != "" {
		dbg := http.NewServeMux()
		dbg.HandleFunc("/debug/pprof/", pprof.Index)
		dbg.HandleFunc("/debug/pprof/profile", pprof.Profile)
		dbg.HandleFunc("/debug/pprof/trace", pprof.Trace)
		go func() {
			if err := http.ListenAndServe(*debugAddr, dbg); err != nil {
				log.Error("debug server stopped", "error", err.Error())
			}
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	for {
		select {
		case <-hup:
			reload("SIGHUP")
		case <-flushTick.C:
			flushUsage()
		case <-tick:
			swapIfChanged(svc, *snapDir, openOpts, log, false)
		case err := <-errc:
			return err
		case <-ctx.Done():
			log.Info("shutting down")
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}
	}
}

// swapIfChanged opens the snapshot the pointer names now and swaps to it when
// it differs from the one served (or always, when forced by SIGHUP).
func swapIfChanged(svc *service.Service, dir string, o service.OpenOptions, log *slog.Logger, force bool) {
	target, err := filepath.EvalSymlinks(dir)
	if err != nil {
		log.Error("snapshot pointer unreadable; still serving the current snapshot", "snapshot", dir, "error", err.Error())
		return
	}
	cur := svc.Current()
	if cur != nil && cur.Dir == target && !force {
		return
	}
	if cur != nil && cur.Dir == target {
		return // SIGHUP with an unchanged pointer: the keys were the point
	}
	next, err := service.OpenSnapshot(dir, o)
	if err != nil {
		log.Error("new snapshot refused; still serving the current one", "snapshot", target, "error", err.Error())
		return
	}
	svc.Swap(next)
	log.Info("snapshot swapped", "snapshot", next.Dir, "build_id", next.Manifest.BuildID)
}
