// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package owners

import (
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
)

var t0 = time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC)

func admit(t *testing.T, tb *Table, k Key, o Origin, at time.Duration) bool {
	t.Helper()
	x := tb.Begin()
	ok, err := x.Admit(t.Context(), k, o, t0.Add(at))
	require.NoError(t, err)
	require.NoError(t, x.Commit(t.Context()))
	return ok
}

// TestMemoryOnlyForgetsTheLeastRecent: without storage, a session evicted
// from memory is owned anew by whichever source comes next; with storage
// it is read back.
func TestMemoryOnlyForgetsTheLeastRecent(t *testing.T) {
	a, b := Key{"claude_code", "A"}, Key{"claude_code", "B"}

	mem := New(FirstSeen, nil, 1)
	assert.True(t, admit(t, mem, a, Native, 0))
	assert.True(t, admit(t, mem, b, Files, 0))
	assert.Equal(t, 1, mem.Len())
	assert.True(t, admit(t, mem, a, Files, time.Second), "A was forgotten")

	client := storagetest.NewInMemoryClient(component.KindProcessor, component.MustNewID("agent_native"), "")
	stored := New(FirstSeen, client, 1)
	assert.True(t, admit(t, stored, a, Native, 0))
	assert.True(t, admit(t, stored, b, Files, 0))
	assert.False(t, admit(t, stored, a, Files, time.Second), "A is read back: native owns it")
}

// TestTxnSeesItsOwnDecisions: within one batch, more sessions than the
// cache holds keep the decisions taken earlier in the batch, and nothing
// reaches memory or storage before Commit.
func TestTxnSeesItsOwnDecisions(t *testing.T) {
	client := storagetest.NewInMemoryClient(component.KindProcessor, component.MustNewID("agent_native"), "")
	tb := New(FirstSeen, client, 1)
	x := tb.Begin()
	for _, s := range []string{"A", "B", "C"} {
		ok, err := x.Admit(t.Context(), Key{"codex", s}, Native, t0)
		require.NoError(t, err)
		assert.True(t, ok)
	}
	ok, err := x.Admit(t.Context(), Key{"codex", "A"}, Files, t0)
	require.NoError(t, err)
	assert.False(t, ok)
	b, err := client.Get(t.Context(), Key{"codex", "A"}.storageKey())
	require.NoError(t, err)
	assert.Nil(t, b, "not written before Commit")
	require.NoError(t, x.Commit(t.Context()))
	b, err = client.Get(t.Context(), Key{"codex", "A"}.storageKey())
	require.NoError(t, err)
	assert.JSONEq(t, `{"o":1}`, string(b))
}
