package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/mcp"
	"github.com/productdata/pds/mcp/stdio"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/snapshots"
)

// apiKeyEnv names the environment variable that holds the API key of
// pds mcp --url. A key is never a flag, since flags show in ps.
const apiKeyEnv = "PDS_API_KEY"

// localCaller is who calls the operations of pds mcp --snapshot: whoever
// started the process can read the snapshot files anyway, so it holds every
// scope and no quota or rate limit applies. tenant decides which
// tenant-owned records it sees, as a key's tenant does.
func localCaller(tenant string) domain.Caller {
	return domain.Caller{Tenant: tenant, Scopes: keys.AllScopes, KeyID: "local"}
}

// runMCP is 'pds mcp': an MCP server on stdin and stdout for hosts that start
// one as a subprocess. Logs go to stderr; stdout carries only the protocol.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return serveMCP(ctx, args, os.Stdin, stdout, stderr)
}

// serveMCP is runMCP reading stdin.
func serveMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", "mcp --snapshot SNAPSHOT_DIR | --url BASE_URL (key in $"+apiKeyEnv+")", stderr)
	snapDir := fs.String("snapshot", "", "serve the tools from this snapshot directory, in this process")
	url := fs.String("url", "", "serve the tools by calling the pds at this base URL (its /v1/mcp), with the key in $"+apiKeyEnv)
	cacheMB := fs.Int("cache-mb", 64, "block cache size in MiB (with --snapshot)")
	tenant := fs.String("tenant", "local", "with --snapshot: the tenant to answer as (which tenant-owned records are visible)")
	logLevel := fs.String("log-level", "warn", "log level on stderr: debug, info, warn, error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (*snapDir == "") == (*url == "") {
		return fmt.Errorf("%w: give exactly one of --snapshot and --url", errUsage)
	}
	if *url != "" && *tenant != "local" {
		return fmt.Errorf("%w: --tenant is for --snapshot; with --url the key decides the tenant", errUsage)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %w", errUsage, err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))

	var srv *sdk.Server
	if *snapDir != "" {
		snap, err := service.OpenSnapshot(*snapDir, snapshots.OpenOptions{CacheBytes: int64(*cacheMB) << 20})
		if err != nil {
			return err
		}
		svc := service.New(snap, nil, nil, log)
		defer svc.Close()
		srv = mcp.NewLocalServer(svc, localCaller(*tenant), log)
		log.Info("serving MCP on stdio", "snapshot", *snapDir, "build_id", snap.Manifest.BuildID)
	} else {
		key := os.Getenv(apiKeyEnv)
		if key == "" {
			return fmt.Errorf("%w: --url needs an API key with the mcp scope in $%s", errUsage, apiKeyEnv)
		}
		var closeRemote func() error
		var err error
		if srv, closeRemote, err = mcp.NewRemoteServer(ctx, *url, key, log); err != nil {
			return err
		}
		defer closeRemote()
		log.Info("serving MCP on stdio", "url", *url)
	}
	err := srv.Run(ctx, stdio.New(stdin, stdout, log))
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
