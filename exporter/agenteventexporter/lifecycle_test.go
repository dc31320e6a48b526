// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadata"
)

// TestLifecycle creates each format for its signal through the factory,
// starts it, hands it data, and shuts it down (twice: shutdown is idempotent).
func TestLifecycle(t *testing.T) {
	s := newTestSession("3f1c2b7a-0000-4000-8000-000000000001")
	logs := logsOf(s.userPrompt("p1", "hello", 0), s.answer("a1", "r1", "hi", 1))
	for _, format := range []Format{FormatAgtraceV1, FormatUniversal, FormatAgentManager, FormatCanonicalTask} {
		t.Run(string(format), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(format, dir)
			set := exportertest.NewNopSettings(metadata.Type)
			f := NewFactory()
			var c component.Component
			var err error
			if format == FormatCanonicalTask {
				exp, cerr := f.CreateTraces(t.Context(), set, cfg)
				require.NoError(t, cerr)
				require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))
				err = exp.ConsumeTraces(t.Context(), ptrace.NewTraces())
				c = exp
			} else {
				exp, cerr := f.CreateLogs(t.Context(), set, cfg)
				require.NoError(t, cerr)
				require.NoError(t, exp.Start(t.Context(), componenttest.NewNopHost()))
				err = exp.ConsumeLogs(t.Context(), logs)
				c = exp
			}
			require.NoError(t, err)
			require.NoError(t, c.Shutdown(t.Context()))
			require.NoError(t, c.Shutdown(t.Context()))
			if format != FormatCanonicalTask {
				assert.FileExists(t, filepath.Join(dir, "claude-code", s.id+".jsonl"))
			}
		})
	}
}

func TestShutdownBeforeStart(t *testing.T) {
	for _, format := range []Format{FormatUniversal, FormatCanonicalTask} {
		e, err := newExporter(exportertest.NewNopSettings(metadata.Type), testConfig(format, t.TempDir()))
		require.NoError(t, err)
		require.NoError(t, e.shutdown(t.Context()))
	}
}

// TestFormatInTheWrongPipeline: a format meant for the other signal fails
// when the collector creates the exporter, naming the exporter and the fix.
func TestFormatInTheWrongPipeline(t *testing.T) {
	f := NewFactory()
	set := exportertest.NewNopSettings(metadata.Type)
	set.ID = component.NewIDWithName(metadata.Type, "canonical")
	_, err := f.CreateLogs(t.Context(), set, testConfig(FormatCanonicalTask, t.TempDir()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent_event/canonical: `format` canonical_task reads traces (turns from the agent_span connector), so it cannot be in a logs pipeline")
	assert.Contains(t, err.Error(), "put agent_event/canonical in a traces pipeline, or use agtrace_v1, universal or agent_manager here")

	set.ID = component.NewIDWithName(metadata.Type, "universal")
	_, err = f.CreateTraces(t.Context(), set, testConfig(FormatUniversal, t.TempDir()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent_event/universal: `format` universal reads logs (agent events), so it cannot be in a traces pipeline")
	assert.Contains(t, err.Error(), "put agent_event/universal in a logs pipeline, or use canonical_task here")
}

// TestStartFailsOnAnUnusableDirectory: a directory that cannot be created
// fails Start, naming the setting.
func TestStartFailsOnAnUnusableDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, writeFile(file, "x"))
	e, err := newExporter(exportertest.NewNopSettings(metadata.Type), testConfig(FormatAgtraceV1, filepath.Join(file, "out")))
	require.NoError(t, err)
	err = e.start(t.Context(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "`directory`")
	require.NoError(t, e.shutdown(t.Context()))
}

// TestCreateDirectory: a missing directory is created at start with
// directory_permissions, and so are the per-agent folders; with
// create_directory off a missing directory fails the start and says how
// to fix it.
// (0700: no umask takes the owner's bits away.)
func TestCreateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export", "agtrace")
	cfg := testConfig(FormatAgtraceV1, dir)
	cfg.DirectoryPermissions = "0700"
	now := farFuture
	e := newTestExporter(t, cfg, &now)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	s := newTestSession("12121212-0000-4000-8000-000000000012")
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(s.userPrompt("p1", "hi", 0))))
	require.NoError(t, e.shutdown(t.Context()))
	info, err = os.Stat(filepath.Join(dir, "claude-code"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "the agent's folder")
	assert.FileExists(t, filepath.Join(dir, "claude-code", s.id+".jsonl"))

	// An existing directory is left as it is.
	existing := t.TempDir()
	require.NoError(t, os.Chmod(existing, 0o755))
	cfg = testConfig(FormatAgtraceV1, existing)
	cfg.DirectoryPermissions = "0700"
	newTestExporter(t, cfg, &now)
	info, err = os.Stat(existing)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), info.Mode().Perm())

	missing := filepath.Join(t.TempDir(), "missing")
	cfg = testConfig(FormatCanonicalTask, missing)
	cfg.CreateDirectory = false
	e, err = newExporter(exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	err = e.start(t.Context(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "does not exist: create it, or set `create_directory: true`")
	require.NoError(t, e.shutdown(t.Context()))
	assert.NoDirExists(t, missing)
}
