// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadata"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/readmetest"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for _, tc := range []struct {
		id           component.ID
		want         *Config
		wantErr      []string
		unmarshalErr string
	}{
		{
			id: component.NewID(metadata.Type),
			want: &Config{
				Format: FormatAgtraceV1, Directory: "./_out/agtrace", CreateDirectory: true, DirectoryPermissions: "0750",
				MaxOpenFiles: 64, SessionIdleTimeout: 30 * time.Minute,
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "stdout"),
			want: &Config{
				Format: FormatUniversal, Stdout: true, CreateDirectory: true, DirectoryPermissions: "0750",
				MaxOpenFiles: 64, SessionIdleTimeout: 30 * time.Minute,
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "full"),
			want: &Config{
				Format: FormatUniversal, Directory: "/var/lib/agentotel/universal", CreateDirectory: true,
				DirectoryPermissions: "0700", Fsync: true, MaxOpenFiles: 16,
				IncludeContent: true, IncludeRaw: true, SessionIdleTimeout: time.Hour,
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "existing_directory"),
			want: &Config{
				Format: FormatCanonicalTask, Directory: "/srv/export/canonical", CreateDirectory: false, DirectoryPermissions: "0750",
				MaxOpenFiles: 64, SessionIdleTimeout: 30 * time.Minute,
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "invalid"),
			wantErr: []string{
				"`format` must be set", "`directory` and `stdout` cannot both be set",
				"`directory_permissions` \"rwxr-x---\" must be octal permission bits",
				"`max_open_files` must be at least 1", "`session_idle_timeout` must be positive",
			},
		},
		{
			id:      component.NewIDWithName(metadata.Type, "setuid"),
			wantErr: []string{"`directory_permissions` \"4750\" has bits other than permissions"},
		},
		{
			id:      component.NewIDWithName(metadata.Type, "no_output"),
			wantErr: []string{"one of `directory` and `stdout` must be set"},
		},
		{
			id:           component.NewIDWithName(metadata.Type, "unknown_format"),
			unmarshalErr: `unknown format "otlp"`,
		},
	} {
		t.Run(tc.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tc.id.String())
			require.NoError(t, err)
			if tc.unmarshalErr != "" {
				assert.ErrorContains(t, sub.Unmarshal(cfg), tc.unmarshalErr)
				return
			}
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tc.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					assert.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg)
		})
	}
}

func TestUnknownSettingIsRejected(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	conf := confmap.NewFromStringMap(map[string]any{"format": "universal", "stdout": true, "include_contnet": true})
	assert.ErrorContains(t, conf.Unmarshal(cfg), "include_contnet")
}

// TestDirectoryInsideAgentFolder: the exporter never writes into the
// agents' own folders (the receiver would read our files as transcripts).
func TestDirectoryInsideAgentFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, "claude-config"))
	for _, dir := range []string{
		filepath.Join(home, ".claude"),
		filepath.Join(home, ".claude", "projects", "export"),
		"~/.codex/out",
		filepath.Join(home, "claude-config", "x"),
	} {
		cfg := &Config{Format: FormatUniversal, Directory: dir, MaxOpenFiles: 1, SessionIdleTimeout: time.Minute}
		assert.ErrorContains(t, cfg.Validate(), "an agent's own folder", dir)
	}
	for _, dir := range []string{filepath.Join(home, ".claude-export"), filepath.Join(home, "out"), "~/agentotel"} {
		cfg := &Config{Format: FormatUniversal, Directory: dir, MaxOpenFiles: 1, SessionIdleTimeout: time.Minute}
		assert.NoError(t, cfg.Validate(), dir)
	}
}

// TestEveryAgentFolderRefused: every folder of every registered agent is
// refused, at its default place and wherever its environment variable
// relocates it (a relocated Pi or OpenCode folder included).
func TestEveryAgentFolderRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	moved := t.TempDir()
	for _, d := range agents.All() {
		for _, v := range d.EnvVars() {
			t.Setenv(v, filepath.Join(moved, v))
		}
	}
	validate := func(dir string) error {
		cfg := &Config{Format: FormatUniversal, Directory: dir, MaxOpenFiles: 1, SessionIdleTimeout: time.Minute}
		return cfg.Validate()
	}
	for _, d := range agents.All() {
		env := agents.Env{Home: home, Getenv: os.Getenv}
		folders := d.KnownFolders(env)
		require.NotEmpty(t, folders, d.Source)
		read, err := d.DataFolders(env)
		require.NoError(t, err, d.Source)
		for _, f := range read {
			assert.Contains(t, folders, f, "%s reads %s", d.Source, f)
		}
		for _, v := range d.EnvVars() {
			// Each variable relocates a folder below what it names.
			found := false
			for _, f := range folders {
				found = found || strings.HasPrefix(f, filepath.Join(moved, v))
			}
			assert.True(t, found, "%s: no folder where %s relocates it", d.Source, v)
		}
		for _, f := range folders {
			assert.ErrorContains(t, validate(f), "an agent's own folder", "%s: %s", d.Source, f)
			assert.ErrorContains(t, validate(filepath.Join(f, "export")), "an agent's own folder", "%s: %s", d.Source, f)
		}
	}
	assert.NoError(t, validate(filepath.Join(home, "agentotel-out")))
}

// readmeExporters returns every agent_event exporter block of the README's
// YAML examples, by name.
func readmeExporters(t *testing.T) map[string]map[string]any {
	found := map[string]map[string]any{}
	for _, b := range readmetest.Blocks(t, "exporters", "agent_event") {
		found[b.Name] = b.Section
	}
	return found
}

// TestREADMEExamples loads every agent_event block of the README: each must
// load and validate, and those also in testdata/config.yaml must equal it.
func TestREADMEExamples(t *testing.T) {
	testdata, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	examples := readmeExporters(t)
	assert.GreaterOrEqual(t, len(examples), 7)
	for name, section := range examples {
		cfg := NewFactory().CreateDefaultConfig()
		require.NoError(t, confmap.NewFromStringMap(section).Unmarshal(cfg), name)
		require.NoError(t, confmap.Validate(cfg), name)
		if !testdata.IsSet(name) {
			continue
		}
		want := NewFactory().CreateDefaultConfig()
		sub, err := testdata.Sub(name)
		require.NoError(t, err)
		require.NoError(t, sub.Unmarshal(want))
		assert.Equal(t, want, cfg, "README's %s differs from testdata/config.yaml", name)
	}
}

// TestExportConfig: config/export.yaml's exporters load and validate, and
// are the ones the README shows.
func TestExportConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "config", "export.yaml"))
	require.NoError(t, err)
	exporters, err := cm.Sub("exporters")
	require.NoError(t, err)
	examples := readmeExporters(t)
	formats := map[Format]bool{}
	for name, v := range exporters.ToStringMap() {
		section, _ := v.(map[string]any)
		cfg := NewFactory().CreateDefaultConfig().(*Config)
		require.NoError(t, confmap.NewFromStringMap(section).Unmarshal(cfg), name)
		require.NoError(t, confmap.Validate(cfg), name)
		formats[cfg.Format] = true
		assert.Equal(t, examples[name], section, "README's %s differs from config/export.yaml", name)
	}
	assert.Len(t, formats, 4, "config/export.yaml writes every format")
}
