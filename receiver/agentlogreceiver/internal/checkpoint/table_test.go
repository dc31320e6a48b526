// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package checkpoint

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// counter is a session state for the table tests.
type counter struct{ n int }

func counterCodec() Codec[*counter] {
	return Codec[*counter]{
		Fresh:   func(string) *counter { return &counter{} },
		Marshal: func(c *counter) ([]byte, error) { return []byte(strconv.Itoa(c.n)), nil },
		Unmarshal: func(_ string, b []byte) (*counter, error) {
			n, err := strconv.Atoi(string(b))
			return &counter{n: n}, err
		},
	}
}

func newTestTable(t *testing.T, client storage.Client, persist bool, maxSessions int, now func() time.Time) *Table[*counter] {
	t.Helper()
	cp := New(client, "agent", persist)
	return NewTable(cp, "", counterCodec(), LifeCycle{MaxSessions: maxSessions, ForgetAfter: time.Hour, Now: now},
		func(err error) { t.Error(err) })
}

// testClient is an in-memory storage client with persist, a no-op one
// without.
func testClient(persist bool) storage.Client {
	if persist {
		return storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("agentlog"), "")
	}
	return storage.NewNopClient()
}

// bump reads a session once: its count goes up by one and is committed.
func bump(ctx context.Context, tb *Table[*counter], key string, probes ...string) int {
	s := tb.Acquire(ctx, key, probes...)
	defer tb.Release(s)
	s.State.n++
	tb.Commit(ctx, s)
	return s.State.n
}

// TestSessionTableCapReloads: past the cap, the least recently active
// session leaves memory and comes back with its state, with storage and
// without.
func TestSessionTableCapReloads(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(strconv.FormatBool(persist), func(t *testing.T) {
			ctx := t.Context()
			client := testClient(persist)
			tb := newTestTable(t, client, persist, 2, time.Now)
			for range 3 {
				for i := range 5 {
					bump(ctx, tb, "k"+strconv.Itoa(i), "p"+strconv.Itoa(i))
				}
			}
			assert.LessOrEqual(t, tb.ResidentCount(), 2)
			assert.Equal(t, 4, bump(ctx, tb, "k0"), "evicted three times, never lost")
		})
	}
}

// TestSessionTableForgets: a session is forgotten only when all its probes
// are gone and it has been idle for forget_after; its stored state goes
// with it. A session known without probes is never taken for gone.
func TestSessionTableForgets(t *testing.T) {
	ctx := t.Context()
	client := storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("agentlog"), "")
	now := time.Now()
	clock := func() time.Time { return now }
	tb := newTestTable(t, client, true, 10, clock)
	var forgotten []string
	tb.OnForget = func(key string, _ []string) { forgotten = append(forgotten, key) }
	bump(ctx, tb, "a", "fa", "fa-copy")
	bump(ctx, tb, "b", "fb")
	peek := tb.Acquire(ctx, "c") // no probes: where its data is, is not known
	tb.Release(peek)
	present := map[string]bool{"fa-copy": true}
	exists := func(p string) bool { return present[p] }

	tb.Sweep(ctx, exists)
	assert.Empty(t, forgotten, "not idle for forget_after yet")
	now = now.Add(2 * time.Hour)
	tb.Sweep(ctx, exists)
	assert.Equal(t, []string{"b"}, forgotten, "a has one probe left; c has none known")
	b, err := client.Get(ctx, "agent.b")
	require.NoError(t, err)
	assert.Nil(t, b, "the stored state is deleted")
	b, err = client.Get(ctx, "agent.a")
	require.NoError(t, err)
	assert.Equal(t, "1", string(b))

	// The index outlives the table: a new one (a restart) forgets a too.
	delete(present, "fa-copy")
	tb2 := newTestTable(t, client, true, 10, clock)
	tb2.OnForget = func(key string, _ []string) { forgotten = append(forgotten, key) }
	tb2.Sweep(ctx, exists)
	assert.Equal(t, []string{"b", "a"}, forgotten)
}

// TestSessionTableReportsStorageErrors: a failing storage is reported, and
// the session goes on from a fresh state.
func TestSessionTableReportsStorageErrors(t *testing.T) {
	var reported []error
	cp := New(failingClient{}, "agent", true)
	tb := NewTable(cp, "", counterCodec(), LifeCycle{MaxSessions: 1, Now: time.Now}, func(err error) { reported = append(reported, err) })
	assert.Equal(t, 1, bump(t.Context(), tb, "k", "p"))
	assert.Len(t, reported, 2, "the read and the write")
}

type failingClient struct{ storage.Client }

func (failingClient) Get(context.Context, string) ([]byte, error) {
	return nil, errors.New("disk gone")
}
func (failingClient) Set(context.Context, string, []byte) error { return errors.New("disk gone") }
func (failingClient) Batch(context.Context, ...*storage.Operation) error {
	return errors.New("disk gone")
}

// TestSessionIndexBounded: the index keeps in memory the entries of the
// sessions in memory and a bounded number more; the rest is in its shards,
// from where sessions are still known and forgotten, with storage and
// without.
func TestSessionIndexBounded(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(strconv.FormatBool(persist), func(t *testing.T) {
			ctx := t.Context()
			client := testClient(persist)
			now := time.Now()
			clock := func() time.Time { return now }
			tb := newTestTable(t, client, persist, 5, clock)
			tb.maxPending = 20
			var forgotten []string
			tb.OnForget = func(key string, _ []string) { forgotten = append(forgotten, key) }
			const sessions = 500
			for i := range sessions {
				bump(ctx, tb, "s"+strconv.Itoa(i), "f"+strconv.Itoa(i))
				require.LessOrEqual(t, tb.indexed(), 5+20+1, "entries in memory after %d sessions", i+1)
			}
			for _, i := range []int{0, 123, 499} {
				assert.True(t, tb.Known("s"+strconv.Itoa(i)))
			}
			assert.False(t, tb.Known("s500"))

			present := map[string]bool{}
			for i := range sessions {
				if i%7 != 0 {
					present["f"+strconv.Itoa(i)] = true
				}
			}
			exists := func(p string) bool { return present[p] }
			tb.Sweep(ctx, exists)
			assert.Empty(t, forgotten, "not idle for forget_after yet")
			now = now.Add(2 * time.Hour)
			bump(ctx, tb, "s7", "f7") // read again: not idle
			tb.Sweep(ctx, exists)
			want := []string{}
			for i := 0; i < sessions; i += 7 {
				if i != 7 {
					want = append(want, "s"+strconv.Itoa(i))
				}
			}
			assert.ElementsMatch(t, want, forgotten)
			assert.False(t, tb.Known("s14"))
			assert.True(t, tb.Known("s15"))
			assert.True(t, tb.Known("s7"))
			assert.LessOrEqual(t, tb.indexed(), 5+20+1)
			if !persist {
				return
			}
			b, err := client.Get(ctx, "agent.s14")
			require.NoError(t, err)
			assert.Nil(t, b, "a forgotten session's state is deleted")
			b, err = client.Get(ctx, "agent.s15")
			require.NoError(t, err)
			assert.Equal(t, "1", string(b))
		})
	}
}
