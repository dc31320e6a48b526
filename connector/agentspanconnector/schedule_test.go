// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Every close pass of every test in this package is checked against a pass
// over every open unit: the groups it emits, in what order, why, and with
// which units, must be the same (schedule.go).
func init() { verifyPass = checkAgainstFullPass }

// Every pass of every test drops the events waiting for a prompt that a
// walk over every thread drops.
func init() {
	verifyPreambles = func(th threadKey) {
		panic(fmt.Sprintf("preambles.drop kept the waiting events of %v; a walk over every thread drops them", th))
	}
}

// Every link resolution of every test is checked against a walk over every
// unresolved link: none it left alone could have been resolved.
func init() {
	verifyLinks = func(th threadKey) {
		panic(fmt.Sprintf("linker.resolve left %v unresolved; a walk over every link resolves it", th))
	}
}

func checkAgainstFullPass(sc *scheduler, sorted []unitKey, now time.Time, shutdown bool) {
	want := fullPassOutcome(sc.rules, sc.sortedUnits(), awaitingEverywhere(sc.store), now, shutdown)
	got := fullPassOutcome(sc.rules, sorted, sc.rules.awaitingIn(sorted), now, shutdown)
	if !slices.Equal(want, got) {
		panic(fmt.Sprintf("incremental close pass differs from a full pass at %v:\nfull:        %v\nincremental: %v", now, want, got))
	}
}

// fullPassOutcome lists, in order, each group the pass would emit: its
// reason and its units.
func fullPassOutcome(r *closeRules, sorted []unitKey, awaiting map[unitKey]bool, now time.Time, shutdown bool) []string {
	children, tops := r.groups(sorted)
	var out []string
	for _, k := range tops {
		reason, done := r.closeReason(k, children, awaiting, now, shutdown)
		if !done {
			continue
		}
		var members []unitKey
		var walk func(k unitKey)
		seen := map[unitKey]bool{}
		walk = func(k unitKey) {
			if seen[k] {
				return
			}
			seen[k] = true
			members = append(members, k)
			for _, c := range children[k] {
				walk(c)
			}
		}
		walk(k)
		out = append(out, fmt.Sprintf("%d %v", reason, members))
	}
	return out
}

// awaitingEverywhere is awaitingIn computed the way a pass over every open
// unit did: over the links of every session with an open unit.
func awaitingEverywhere(st *sessionStore) map[unitKey]bool {
	open := map[sessKey]bool{}
	for k := range st.units {
		open[k.Thread.Sess()] = true
	}
	out := map[unitKey]bool{}
	for sk := range open {
		for child := range st.sessions[sk].links {
			l := st.links[child]
			if !l.Resolved || out[l.Parent] {
				continue
			}
			if _, isOpen := st.units[l.Parent]; !isOpen {
				continue
			}
			if _, seen := st.threads[child]; !seen {
				out[l.Parent] = true
			}
		}
	}
	return out
}

// Every eviction of every test is checked against a walk over every
// session: the same sessions, in the same order.
func init() {
	verifyEvict = func(want, got []sessKey) {
		if !slices.Equal(want, got) {
			panic(fmt.Sprintf("evict dropped %v, a walk over every session %v", got, want))
		}
	}
}

// TestIncrementalPassesMatchFullPasses drives the connector with many
// interleaved live sessions (subagents spawned, some never read, tool
// calls left open, turns ended or not, reads caught up or not, the clock
// moving in jumps, ticks) and few sessions cached: the checks above compare
// every close pass and every eviction with a walk over everything.
func TestIncrementalPassesMatchFullPasses(t *testing.T) {
	for seed := range int64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := newHarness(t, func(c *Config) {
				c.MaxCachedSessions = 4
				c.MaxOpenToolDuration = 12 * time.Minute
			})
			runInterleaved(h, seed)
			require.NoError(t, h.c.Shutdown(t.Context()))
			assert.Zero(t, h.c.asm.openUnits())
			assert.NotEmpty(t, h.spans())
		})
	}
}

// runInterleaved feeds h the interleaved live sessions of a seed: thirty
// sessions of one to four turns, each spawning a subagent (read with its
// turn, later, or never) with a tool call left open or not, turns ended by
// a marker or not, reads caught up or not, in random small batches with
// the clock moving in jumps and ticks between; then half an hour of ticks.
func runInterleaved(h *harness, seed int64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	var queues [][]agentevent.Event
	for i := range 30 {
		s := newSession(fmt.Sprintf("s%02d", i))
		var evs []agentevent.Event
		sec := float64(rng.IntN(600))
		if i%5 == 0 {
			// A summary before the first prompt: waits for it.
			evs = append(evs, s.ev(agentevent.TypeSessionSummary, "sum", sec))
		}
		if i%7 == 0 {
			// A session of a summary alone: dropped once idle.
			lone := newSession(fmt.Sprintf("lone%02d", i))
			queues = append(queues, []agentevent.Event{lone.ev(agentevent.TypeSessionSummary, "sum", sec)})
		}
		for turn := range 1 + rng.IntN(4) {
			p := fmt.Sprintf("p%d", turn)
			evs = append(evs, s.prompt(p, sec), s.call(p+"c", p+"m1", p+"t", "Agent", sec+1))
			spawned := rng.IntN(2) == 0
			agent := fmt.Sprintf("ag%d", turn)
			var sub []agentevent.Event
			if spawned {
				x := s.subagent(agent, "Explore")
				sub = []agentevent.Event{x.prompt(p+"xp", sec+2), x.call(p+"xc", p+"xm1", p+"xt", "Grep", sec+3)}
				if rng.IntN(2) == 0 {
					sub = append(sub, x.result(p+"xr", p+"xt", "Grep", sec+4), x.answer(p+"xa", p+"xm2", sec+5))
				}
			}
			if rng.IntN(4) > 0 {
				evs = append(evs, s.result(p+"r", p+"t", "Agent", sec+30, func(e *agentevent.Event) {
					if spawned {
						e.SpawnedAgentID = agent
					}
				}))
			}
			switch rng.IntN(3) {
			case 0: // the subagent's file is never read
			case 1:
				evs = append(evs, sub...)
			default:
				queues = append(queues, sub)
			}
			if rng.IntN(3) > 0 {
				mods := []mod{}
				if rng.IntN(2) == 0 {
					mods = append(mods, endMarker("end_turn"))
				}
				evs = append(evs, s.answer(p+"a", p+"m2", sec+31, mods...))
			}
			sec += float64(60 + rng.IntN(900))
		}
		queues = append(queues, evs)
	}
	for {
		i, ok := pickQueue(rng, queues)
		if !ok {
			break
		}
		n := min(1+rng.IntN(4), len(queues[i]))
		batch := queues[i][:n]
		queues[i] = queues[i][n:]
		if rng.IntN(2) == 0 {
			h.feed(batch...)
		} else {
			h.feedPartial(batch...)
		}
		h.mu.Lock()
		h.now = h.now.Add(time.Duration(rng.IntN(90)) * time.Second)
		h.mu.Unlock()
		if rng.IntN(5) == 0 {
			h.tick()
		}
	}
	for range 30 {
		h.mu.Lock()
		h.now = h.now.Add(time.Minute)
		h.mu.Unlock()
		h.tick()
	}
}

// pickQueue draws, with rng, the index of a queue that still holds
// something; false when every queue is empty.
func pickQueue[T any](rng *rand.Rand, queues [][]T) (int, bool) {
	var live []int
	for i, q := range queues {
		if len(q) > 0 {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return 0, false
	}
	return live[rng.IntN(len(live))], true
}
