// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package kilo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

func TestRegistered(t *testing.T) {
	d := agents.Lookup(Source)
	require.NotNil(t, d, "init registers Kilo CLI")
	assert.Equal(t, "kilo", d.Service)
	assert.Equal(t, "kilo", Source.ServiceName())
	assert.Equal(t, Source, agentevent.SourceFromServiceName("kilo"))
	assert.Equal(t, agents.OpenCodeStore, d.Reader.Kind)
	assert.Equal(t, "kilo.db", d.Reader.Database)
	assert.True(t, d.Optional)
	require.NotNil(t, d.Ccusage)
	assert.Equal(t, "kilo", d.Ccusage.Command)
	assert.Equal(t, []string{"KILO_DATA_DIR"}, d.Ccusage.Env)
	assert.Nil(t, d.Ccusage.SessionKey, "ccusage names a session by its id")
	assert.True(t, d.Ccusage.ReasoningOutsideOutput)
}

// TestFolders: Kilo's data directory is $XDG_DATA_HOME/kilo when the
// variable names an absolute path, else ~/.local/share/kilo; the include
// pattern is the directory itself.
func TestFolders(t *testing.T) {
	d := Descriptor()
	env := func(home string, vars map[string]string) agents.Env {
		return agents.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
	}
	for _, tt := range []struct {
		name string
		env  agents.Env
		want []string
	}{
		{"default", env("/home/u", nil), []string{"/home/u/.local/share/kilo"}},
		{"XDG_DATA_HOME", env("/home/u", map[string]string{"XDG_DATA_HOME": "/data"}), []string{"/data/kilo"}},
		{"XDG_DATA_HOME below ~", env("/home/u", map[string]string{"XDG_DATA_HOME": "~/xdg"}), []string{"/home/u/xdg/kilo"}},
		{"relative XDG_DATA_HOME", env("/home/u", map[string]string{"XDG_DATA_HOME": "xdg"}), []string{"/home/u/.local/share/kilo"}},
		{"no home, XDG_DATA_HOME", env("", map[string]string{"XDG_DATA_HOME": "/data"}), []string{"/data/kilo"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.DefaultInclude(tt.env)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := d.DefaultInclude(env("", nil))
	require.ErrorIs(t, err, agents.ErrNoHome)
	assert.Equal(t, []string{"~/.local/share/kilo", "$XDG_DATA_HOME/kilo"}, d.DefaultLocations())
	assert.Equal(t, []string{"XDG_DATA_HOME"}, d.EnvVars())
}

// TestStage lays out the repository's Kilo fixtures in a home: the first
// database in Kilo's default data directory, each other in one of its own,
// announced with DataDir; a second corpus root adds directories without
// touching the first one's.
func TestStage(t *testing.T) {
	corpus := corpusDir(t)
	cases, err := filepath.Glob(filepath.Join(corpus, "*", Database))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(cases), 2, "the staging of several databases is tested with the repository's")
	home := t.TempDir()
	var dataDirs []string
	staged := map[string]bool{}
	for root := range 2 {
		s := &agents.Staging{
			Dir: corpus, Home: home, Root: root,
			Copy: func(src, dst string) error {
				require.False(t, filepath.IsAbs(dst), "%s is a path below the home", dst)
				dst = filepath.Join(home, dst)
				if staged[dst] {
					return fmt.Errorf("%s staged twice", dst)
				}
				staged[dst] = true
				b, err := os.ReadFile(src)
				if err != nil {
					return err
				}
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					return err
				}
				return os.WriteFile(dst, b, 0o600) //nolint:gosec // G703: dst is below the test's home
			},
			Note: func(msg string) { t.Log(msg) },
			DataDir: func(dir string) {
				require.False(t, filepath.IsAbs(dir), "%s is a path below the home", dir)
				dataDirs = append(dataDirs, filepath.Join(home, dir))
			},
		}
		require.NoError(t, Descriptor().Fixtures.Stage(s))
	}
	assert.FileExists(t, filepath.Join(home, ".local", "share", "kilo", Database))
	require.Len(t, dataDirs, 2*len(cases)-1, "every database but the first in a data directory of its own")
	for _, dir := range dataDirs {
		assert.FileExists(t, filepath.Join(dir, Database))
		assert.True(t, strings.HasPrefix(dir, home+string(filepath.Separator)), "%s is below the home", dir)
	}
	assert.Len(t, staged, 2*len(cases), "one file per database: the fixtures have no -wal or -shm")
	assert.False(t, slices.Contains(dataDirs, filepath.Join(home, ".local", "share", "kilo")))
}
