// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.yaml.in/yaml/v3"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
)

// loadConfig unmarshals the entry id of testdata/config.yaml over the defaults.
func loadConfig(t *testing.T, id component.ID) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

func TestLoadConfig(t *testing.T) {
	storageID := component.MustNewID("file_storage")
	full := &Config{
		Storage:            &storageID,
		StartAt:            StartAtEnd,
		PollInterval:       500 * time.Millisecond,
		Watch:              false,
		MaxLogSize:         helper.ByteSize(64 * 1024 * 1024),
		MaxConcurrentFiles: 64,
		FingerprintSize:    helper.ByteSize(2000),
		IncludeContent:     true,
		IncludeRaw:         true,
		EmitUnparsed:       true,
		Redact:             true,
		RetryOnFailure: configretry.BackOffConfig{
			Enabled:             true,
			InitialInterval:     500 * time.Millisecond,
			MaxInterval:         10 * time.Second,
			MaxElapsedTime:      time.Hour,
			Multiplier:          1.5,
			RandomizationFactor: 0.5,
		},
		MaxTrackedSessions: 200,
		ForgetAfter:        24 * time.Hour,
		ClaudeCode: AgentConfig{
			Enabled:          true,
			Include:          []string{"~/archive/claude/projects/**/*.jsonl", "/var/lib/claude/projects/**/*.jsonl"},
			Exclude:          []string{"**/agent-acompact-*.jsonl"},
			ExcludeOlderThan: 720 * time.Hour,
		},
		OpenCode: AgentConfig{
			Enabled: true,
			Include: []string{"~/.local/share/opencode", "/srv/opencode-data/*"},
			Exclude: []string{"/srv/opencode-data/scratch"},
		},
		Pi: AgentConfig{
			Enabled:          true,
			Include:          []string{"~/.pi/agent/sessions/**/*.jsonl"},
			ExcludeOlderThan: 720 * time.Hour,
		},
		Codex: AgentConfig{
			Enabled: true,
			Include: []string{"~/.codex/sessions/**/rollout-*.jsonl"},
			Exclude: []string{"**/rollout-2024-*.jsonl"},
		},
		Gemini: AgentConfig{
			Enabled: true,
			Include: []string{"~/.gemini/tmp/*/chats/*.json", "~/.gemini/tmp/*/logs.json"},
			Exclude: []string{"~/.gemini/tmp/scratch/**"},
		},
		CopilotCLI: AgentConfig{
			Enabled: true,
			Include: []string{"~/.copilot/session-state/*/events.jsonl", "~/.copilot/history-session-state/*.json"},
			Exclude: []string{"~/.copilot/session-state/scratch-*/**"},
		},
		Amp: AgentConfig{
			Enabled:          true,
			Include:          []string{"~/.local/share/amp/threads/T-*.json"},
			ExcludeOlderThan: 720 * time.Hour,
		},
	}
	for _, a := range registered() {
		if ac := a.config(full); !ac.Enabled && ac.Include == nil {
			ac.Enabled = true // an agent the full example does not name keeps its default
		}
	}
	tests := []struct {
		id   component.ID
		want *Config
	}{
		{id: component.NewID(metadata.Type), want: NewFactory().CreateDefaultConfig().(*Config)},
		{id: component.NewIDWithName(metadata.Type, "full"), want: full},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg, err := loadConfig(t, tt.id)
			require.NoError(t, err)
			require.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Nil(t, cfg.Storage, "no storage extension unless configured: positions in memory")
	assert.Equal(t, StartAtBeginning, cfg.StartAt, "history matters: agents delete old transcripts")
	assert.Equal(t, time.Second, cfg.PollInterval)
	assert.True(t, cfg.Watch, "changes are read as they are written, between polls")
	assert.Equal(t, helper.ByteSize(256*1024*1024), cfg.MaxLogSize, "transcript lines reach many MB")
	assert.False(t, cfg.IncludeContent, "content is off by default")
	assert.False(t, cfg.IncludeRaw, "raw records are off by default")
	assert.True(t, cfg.ClaudeCode.Enabled)
	assert.Empty(t, cfg.ClaudeCode.Include, "empty include = the standard location, resolved at Start")
	assert.True(t, cfg.OpenCode.Enabled)
	assert.Empty(t, cfg.OpenCode.Include)
	require.NoError(t, confmap.Validate(cfg))
}

func TestInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		// unmarshalErr is set when the value is rejected while loading.
		unmarshalErr string
		validateErr  []string
	}{
		{name: "bad_start_at", unmarshalErr: "`start_at`: unknown value \"middle\""},
		{name: "bad_poll_interval", validateErr: []string{"`poll_interval` must be positive"}},
		{name: "bad_max_log_size", validateErr: []string{"`max_log_size` must be positive"}},
		{name: "bad_max_concurrent_files", validateErr: []string{"`max_concurrent_files` must be at least 1"}},
		{name: "bad_fingerprint_size", validateErr: []string{"`fingerprint_size` must be at least 16 bytes"}},
		{name: "bad_retry_on_failure", validateErr: []string{"`retry_on_failure`: 'max_elapsed_time' must not be less than 'initial_interval'"}},
		{name: "bad_max_tracked_sessions", validateErr: []string{"`max_tracked_sessions` must be at least 1"}},
		{name: "bad_forget_after", validateErr: []string{"`forget_after` must not be negative"}},
		{name: "bad_include", validateErr: []string{"`claude_code.include`"}},
		{name: "bad_exclude", validateErr: []string{"`claude_code.exclude`"}},
		{name: "bad_exclude_older_than", validateErr: []string{"`claude_code.exclude_older_than` must not be negative"}},
		{name: "no_agent", validateErr: []string{"no agent enabled", "`enabled: true` on one of"}},
		{name: "unknown_setting", unmarshalErr: "includes"},
		{name: "all_bad", validateErr: []string{
			"`poll_interval`", "`max_log_size`", "`max_concurrent_files`", "`fingerprint_size`",
			"`claude_code.include`", "`claude_code.exclude_older_than`", "no agent enabled",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(t, component.NewIDWithName(metadata.Type, tt.name))
			if tt.unmarshalErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.unmarshalErr)
				return
			}
			require.NoError(t, err)
			if tt.name == "no_agent" || tt.name == "all_bad" {
				// Every registered agent off, whether the entry names it or not.
				for _, a := range registered() {
					a.config(cfg).Enabled = false
				}
			}
			err = confmap.Validate(cfg)
			require.Error(t, err)
			for _, want := range tt.validateErr {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestValidateRejectsUnknownStartAtSetInCode(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.StartAt = "middle"
	err := cfg.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "`start_at`")
}

// TestREADMEExamples loads every collector configuration in README.md: the
// documented examples are real, valid configurations.
func TestREADMEExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(readme, -1)
	loaded, sawFull := 0, false
	for _, b := range blocks {
		var raw map[string]any
		require.NoError(t, yaml.Unmarshal(b[1], &raw), "README yaml block:\n%s", b[1])
		receivers, ok := raw["receivers"].(map[string]any)
		if !ok {
			continue
		}
		for key, v := range receivers {
			var id component.ID
			require.NoError(t, id.UnmarshalText([]byte(key)))
			if id.Type() != metadata.Type {
				continue
			}
			cfg := createDefaultConfig().(*Config)
			m, _ := v.(map[string]any)
			require.NoError(t, confmap.NewFromStringMap(m).Unmarshal(cfg), "README example %s", key)
			require.NoError(t, confmap.Validate(cfg), "README example %s", key)
			if key == "agent_log/full" {
				want, err := loadConfig(t, component.NewIDWithName(metadata.Type, "full"))
				require.NoError(t, err)
				assert.Equal(t, want, cfg, "README's full example is testdata/config.yaml's agent_log/full")
				sawFull = true
			}
			loaded++
		}
	}
	assert.True(t, sawFull, "README shows the full example")
	assert.GreaterOrEqual(t, loaded, 2, "README shows a minimal and a full example")
}
