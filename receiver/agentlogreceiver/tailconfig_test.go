// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
)

// TestTailConfigLinesAndOffsets runs fileconsumer exactly as the receiver
// configures it and checks what the parsers are handed: every complete line
// byte for byte (no decoding, no trimming, "\n" as the only separator), its
// 1-based number and the offset of its first byte — also after a line that
// exceeded max_log_size — and nothing of an unterminated last line.
func TestTailConfigLinesAndOffsets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	lines := []string{
		`{"a":1}`,
		strings.Repeat("z", 100_000), // over max_log_size below
		"{\"b\":\"x\u2028y\u0085z\"}",
		"",
		"  {\"c\":3}\r",
	}
	writeFile(t, path, lines...)
	appendFile(t, path, `{"unterminated":`)

	cfg := testConfig(dir)
	cfg.MaxLogSize = 4096 // below fileconsumer's initial read buffer (16KiB)
	fc := tailConfig(cfg, &cfg.ClaudeCode, []string{path}, nil)

	type seen struct {
		line   string
		no     int64
		offset int64
	}
	var mu sync.Mutex
	var got []seen
	emit := func(_ context.Context, toks [][]byte, _ map[string]any, last int64, offsets []int64) error {
		mu.Lock()
		defer mu.Unlock()
		for i, tok := range toks {
			got = append(got, seen{string(tok), last - int64(len(toks)) + 1 + int64(i), lineOffset(offsets, i, len(tok))})
		}
		return nil
	}
	m, err := fc.Build(componenttest.NewNopTelemetrySettings(), emit, fileconsumer.WithSplitFunc(splitLines))
	require.NoError(t, err)
	require.NoError(t, m.Start(nil))
	defer func() { require.NoError(t, m.Stop()) }()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= len(lines)
	}, 10*time.Second, 5*time.Millisecond, "every complete line is handed out")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, len(lines), "the unterminated line is not handed out")
	var offset int64
	for i, l := range lines {
		assert.Equal(t, int64(i+1), got[i].no, "line number of line %d", i+1)
		if i == 1 {
			assert.Equal(t, strings.Repeat("z", int(cfg.MaxLogSize)), got[i].line, "an over-long line arrives cut at max_log_size")
		} else {
			assert.Equal(t, l, got[i].line, "line %d byte for byte", i+1)
			assert.Equal(t, offset, got[i].offset, "offset of line %d", i+1)
		}
		offset += int64(len(l)) + 1
	}
}
