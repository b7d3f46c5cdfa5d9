package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemoryLimitOfTheProcessCgroup(t *testing.T) {
	cases := []struct {
		name   string
		cgroup string            // /proc/self/cgroup
		files  map[string]string // under the cgroup mount
		want   int64
		ok     bool
	}{
		{name: "v2 with a limit", cgroup: "0::/pds.service\n",
			files: map[string]string{"pds.service/memory.max": "1073741824\n"}, want: 1 << 30, ok: true},
		{name: "v2 without one", cgroup: "0::/pds.service\n",
			files: map[string]string{"pds.service/memory.max": "max\n"}},
		{name: "v2 in a container, which sees its cgroup at the root", cgroup: "0::/kubepods/pod1/abc\n",
			files: map[string]string{"memory.max": "536870912\n"}, want: 512 << 20, ok: true},
		{name: "v1 memory controller", cgroup: "12:cpu,cpuacct:/x\n7:memory:/pds-bench\n0::/\n",
			files: map[string]string{"memory/pds-bench/memory.limit_in_bytes": "268435456\n"}, want: 256 << 20, ok: true},
		{name: "v1 without a limit", cgroup: "7:memory:/\n",
			files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}},
		{name: "no cgroup files", cgroup: "0::/\n"},
		{name: "garbage", cgroup: "not a cgroup line\n7:memory:/a\n",
			files: map[string]string{"memory/a/memory.limit_in_bytes": "lots\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sys := filepath.Join(dir, "sys")
			for name, body := range c.files {
				p := filepath.Join(sys, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cg := filepath.Join(dir, "cgroup")
			if err := os.WriteFile(cg, []byte(c.cgroup), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := memoryLimitIn(cg, sys)
			if got != c.want || ok != c.ok {
				t.Errorf("memoryLimitIn = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
