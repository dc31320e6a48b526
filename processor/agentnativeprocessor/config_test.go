// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentotel/agentotel/internal/readmetest"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	storageID := component.MustNewID("file_storage")
	for _, tc := range []struct {
		id      component.ID
		want    *Config
		wantErr []string
	}{
		{id: component.NewID(metadata.Type), want: &Config{SessionOwner: OwnerFirst, MaxSessions: 256, Redact: true}},
		{
			id:   component.NewIDWithName(metadata.Type, "full"),
			want: &Config{IncludeContent: true, Storage: &storageID, SessionOwner: OwnerFiles, MaxSessions: 4096, Redact: true},
		},
		{
			id:      component.NewIDWithName(metadata.Type, "invalid_owner"),
			wantErr: []string{"session_owner", `unknown session owner "newest"`},
		},
		{
			id:      component.NewIDWithName(metadata.Type, "invalid"),
			wantErr: []string{"`max_sessions` must be a positive number of sessions, got 0"},
		},
	} {
		t.Run(tc.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tc.id.String())
			require.NoError(t, err)
			err = sub.Unmarshal(cfg)
			if err == nil {
				err = confmap.Validate(cfg)
			}
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

// TestValidateNamesEverySetting: a config built in code (not loaded) is
// checked too, every problem named.
func TestValidateNamesEverySetting(t *testing.T) {
	err := (&Config{SessionOwner: "latest", MaxSessions: -1}).Validate()
	require.Error(t, err)
	assert.ErrorContains(t, err, "`session_owner` must be \"first\" or \"files\", got \"latest\"")
	assert.ErrorContains(t, err, "`max_sessions` must be a positive number of sessions, got -1")
}

// TestREADMEExamples loads every agent_native block of the README's YAML
// examples: each must load and validate, and the full example must be
// agent_native/full of testdata/config.yaml.
func TestREADMEExamples(t *testing.T) {
	readmetest.LoadExamples(t, "processors", "agent_native", NewFactory().CreateDefaultConfig)
}
