// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package faults is the fault-injection suite: the ocb-built collector, with file_storage and
// file exporters for events and spans, is killed (kill -9) or stopped (SIGTERM) at random moments
// while it reads real sessions, restarted on the same state each time, and what all its runs wrote
// together is compared — by event id, by span id, and by span name, parent, start, end and status —
// with what one uninterrupted run of the same input writes. Expected: nothing lost, nothing
// repeated, the same ids, the same spans. Beside them our own agent_event exporter writes every
// event (agtrace_v1) and every turn (canonical_task) to files all the runs share; those must come
// out exactly once — not even the batch in flight at a kill again — each line the same as the
// uninterrupted run's, and no line torn.
//
// With AGENTOTEL_FAULTS=1 it runs 20 kills of a backfill and a kill about every second of live
// sessions (a minute or two in all); `make chaos` sets AGENTOTEL_CHAOS=1 for at least 100 kills of
// each. The random schedule comes from a seed that every test logs; AGENTOTEL_FAULTS_SEED=<seed>
// replays it (the kill times, not the scheduler's interleaving). A failure lists, per agent and
// event type or span kind, the ids lost, repeated or changed, and which runs wrote each copy.
package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/tests/testenv"
)

// settings are the sizes of a run of the suite: `make test` or `make chaos`.
type settings struct {
	chaos         bool
	backfillKills int
	claudeBytes   int64 // backfill corpus
	codexBytes    int64
	geminiBytes   int64
	liveDur       time.Duration // how long the live sessions are written
	liveKills     int           // at least this many kill -9 of the live deployment
	terms         int           // SIGTERMs mid-turn
}

func loadSettings(t *testing.T) settings {
	if testing.Short() {
		t.Skip("fault injection: builds and runs the collector (skipped with -short)")
	}
	if os.Getenv("AGENTOTEL_FAULTS") == "" && os.Getenv("AGENTOTEL_CHAOS") == "" {
		t.Skip("fault injection runs with AGENTOTEL_FAULTS=1 (make test) or AGENTOTEL_CHAOS=1 (make chaos)")
	}
	if os.Getenv("AGENTOTEL_CHAOS") != "" {
		return settings{
			chaos: true, backfillKills: 100, claudeBytes: 24 << 20, codexBytes: 12 << 20, geminiBytes: 6 << 20,
			liveDur: 100 * time.Second, liveKills: 100, terms: 10,
		}
	}
	return settings{
		backfillKills: 20, claudeBytes: 12 << 20, codexBytes: 6 << 20, geminiBytes: 2 << 20,
		liveDur: 12 * time.Second, liveKills: 10, terms: 3,
	}
}

// newRand is the test's random source, from AGENTOTEL_FAULTS_SEED or the clock; the seed is logged.
func newRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTOTEL_FAULTS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "AGENTOTEL_FAULTS_SEED")
		seed = v
	}
	t.Logf("seed %d (AGENTOTEL_FAULTS_SEED=%d repeats this schedule)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// between is a random duration in [lo, hi).
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// Quiet periods after which a deployment is taken to have read everything: the uninterrupted run,
// an interrupted one that holds a copy of everything the uninterrupted one wrote, and one that
// does not (yet). The poll interval is 100ms; the long waits only keep a slow machine from
// turning "not read yet" into "lost".
const (
	quietReference = 4 * time.Second
	quietCovered   = 2 * time.Second
	quietMissing   = 15 * time.Second
)

// settle waits until the deployment's output stops changing: for quiet, or for quietCovered once
// it holds a copy of everything ref holds. It returns when the output last changed.
func settle(t *testing.T, d *deployment, o, ref *output, quiet time.Duration) time.Time {
	t.Helper()
	lastE, lastS := -1, -1
	changed := time.Now()
	testenv.WaitFor(t, 10*time.Minute, "the collector to finish reading", func() (bool, string) {
		o.scan(t, d)
		e, s := o.size()
		if e != lastE || s != lastS {
			lastE, lastS, changed = e, s, time.Now()
		}
		q := time.Since(changed)
		if ref != nil && o.covers(ref) && q >= quietCovered {
			return true, ""
		}
		return q >= quiet && e > 0, fmt.Sprintf("%d events, %d spans, unchanged for %s", e, s, q.Round(time.Millisecond))
	})
	return changed
}

// firstOutput waits, at a fine grain, until run p has written something, or for a second of
// silence (a run with nothing left to read).
func firstOutput(t *testing.T, d *deployment, o *output, p *process) {
	t.Helper()
	for start := time.Now(); o.runEvents[p.n] == 0 && o.runSpans[p.n] == 0 && time.Since(start) < time.Second; {
		require.False(t, p.exited(), "run %d ended by itself:\n%s", p.n, tail(p.logText()))
		time.Sleep(2 * time.Millisecond) // polling the output: the moment of a kill is measured from here
		o.scan(t, d)
	}
}

// finish stops the deployment's last run gracefully and reads the rest of the output, and the
// agent_event files.
func finish(t *testing.T, d *deployment, o *output) {
	t.Helper()
	d.runs[len(d.runs)-1].term(t)
	o.scan(t, d)
	o.exports = readExports(t, d)
	d.checkLog(t)
}

// judge compares the interrupted deployment with the reference, logs the schedule and the
// verdict, and fails on anything but a redelivery after kill -9.
//
// control is the verdict of a second uninterrupted run, when there was one: a difference found
// there too is the collector's output depending on timing, not on the faults, and is marked so.
func judge(t *testing.T, ref, got *output, d *deployment, control *verdict) *verdict {
	t.Helper()
	var sched strings.Builder
	for _, p := range d.runs {
		e, s := got.runEvents[p.n], got.runSpans[p.n]
		end := p.end
		if end == endRunning {
			end = "final"
		}
		fmt.Fprintf(&sched, "run %3d: %-8s after %6s: %5d events, %5d spans\n", p.n, end, p.lived.Round(time.Millisecond), e, s)
	}
	t.Logf("runs:\n%s", sched.String())
	if len(got.torn) > 0 {
		t.Logf("torn last lines of the file exporter (tolerated):\n%s", strings.Join(got.torn, "\n"))
	}
	if len(ref.torn) > 0 {
		t.Errorf("the uninterrupted run's output has torn lines: %v", ref.torn)
	}
	for _, x := range []*exports{ref.exports, got.exports} {
		if len(x.torn) > 0 {
			t.Errorf("agent_event files with a torn or broken line (a kill mid-write must be repaired at the next start):\n%s", strings.Join(x.torn, "\n"))
		}
	}
	v := compare(ref, got, d)
	timing := 0
	if control != nil {
		seen := map[string]bool{}
		for _, f := range control.findings {
			if f.class != classRedelivered {
				seen[f.signal+" "+f.id] = true
			}
		}
		for i, f := range v.findings {
			if f.class != classRedelivered && seen[f.signal+" "+f.id] {
				v.findings[i].detail += " [also between two uninterrupted runs]"
				timing++
			}
		}
	}
	report := v.report(25)
	if timing > 0 {
		report += fmt.Sprintf("%d of the differences also appear between two uninterrupted runs: the output depends on timing there, not on the faults\n", timing)
	}
	if v.failed() {
		t.Errorf("the collector's output differs from the uninterrupted run's:\n%s", report)
		return &v
	}
	t.Logf("same events and spans as the uninterrupted run:\n%s", report)
	return &v
}

// TestBackfill reads a replicated history of real Claude Code, Codex and Gemini CLI sessions,
// killed with kill -9 at random moments, and compares with one uninterrupted read (and a second
// uninterrupted read with the first).
func TestBackfill(t *testing.T) {
	cfg := loadSettings(t)
	r := newRand(t)
	logs := filepath.Join(t.TempDir(), "logs")
	files, size := writeBackfill(t, logs, cfg.claudeBytes, cfg.codexBytes, cfg.geminiBytes)
	t.Logf("history: %d session files, %.1f MB", files, float64(size)/(1<<20))

	// The uninterrupted run: how long it takes to start and to read everything sets the schedule.
	refDep := newDeployment(t, "reference", logs)
	ref := newOutput()
	p := refDep.start()
	firstOutput(t, refDep, ref, p)
	startup := time.Since(p.started)
	read := settle(t, refDep, ref, nil, quietReference).Sub(p.started) - startup
	finish(t, refDep, ref)
	refE, refS := ref.size()
	t.Logf("uninterrupted: first event after %s, all read %s later; %d events, %d spans; agent_event: %d agtrace lines, %d canonical lines",
		startup.Round(time.Millisecond), read.Round(time.Millisecond), refE, refS, ref.exports.count[signalAgtrace], ref.exports.count[signalCanonical])
	require.Positive(t, refS)
	require.Equal(t, refE, ref.exports.count[signalAgtrace], "one agtrace line per event")
	require.Positive(t, ref.exports.count[signalCanonical])

	// A second uninterrupted run must agree with the first: where it does not, the difference is
	// not the faults' doing but the collector's output depending on timing.
	var control *verdict
	t.Run("uninterrupted_again", func(t *testing.T) {
		d := newDeployment(t, "again", logs)
		got := newOutput()
		d.start().waitReady(t)
		settle(t, d, got, ref, quietMissing)
		finish(t, d, got)
		control = judge(t, ref, got, d, nil)
	})

	// The same history, killed at random moments: a fifth of the kills while the collector starts
	// (restoring its state), the others at a random instant after the run wrote its first event,
	// spread so that together the runs get through the history about twice.
	t.Run("kill9", func(t *testing.T) {
		d := newDeployment(t, "interrupted", logs)
		got := newOutput()
		perRun := 4 * read / time.Duration(cfg.backfillKills)
		for range cfg.backfillKills {
			p := d.start()
			if r.IntN(5) == 0 {
				select {
				case <-p.done:
				case <-time.After(between(r, 0, startup)):
				}
			} else {
				firstOutput(t, d, got, p)
				time.Sleep(between(r, 0, perRun)) // the random moment of the kill
			}
			p.kill(t)
			got.scan(t, d)
		}
		d.start().waitReady(t)
		settle(t, d, got, ref, quietMissing)
		finish(t, d, got)
		judge(t, ref, got, d, control)
	})
}

// TestLive writes a Claude Code session (with a subagent) and a Codex rollout line by line and
// rewrites a Gemini CLI chat message by message, and compares one uninterrupted collector with
// a second one, with one killed (kill -9) about every second, and with one stopped (SIGTERM)
// mid-turn.
func TestLive(t *testing.T) {
	cfg := loadSettings(t)
	r := newRand(t)
	in := newLiveInput(t, cfg.liveDur)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	// Every deployment reads the sessions at the same paths (ids hash the file path), written
	// afresh for each.
	logs := filepath.Join(t.TempDir(), "logs")
	fresh := func(t *testing.T) {
		require.NoError(t, os.RemoveAll(logs))
		require.NoError(t, os.MkdirAll(logs, 0o755))
	}

	// The uninterrupted run.
	fresh(t)
	refDep := newDeployment(t, "reference", logs)
	ref := newOutput()
	refDep.start().waitReady(t)
	require.NoError(t, <-in.play(ctx, logs, nil))
	settle(t, refDep, ref, nil, quietReference)
	finish(t, refDep, ref)
	refE, refS := ref.size()
	t.Logf("uninterrupted: %d events, %d spans; agent_event: %d agtrace lines, %d canonical lines",
		refE, refS, ref.exports.count[signalAgtrace], ref.exports.count[signalCanonical])
	require.Positive(t, refS)
	require.Equal(t, refE, ref.exports.count[signalAgtrace], "one agtrace line per event")
	require.Positive(t, ref.exports.count[signalCanonical])

	var control *verdict
	t.Run("uninterrupted_again", func(t *testing.T) {
		fresh(t)
		d := newDeployment(t, "again", logs)
		got := newOutput()
		d.start().waitReady(t)
		require.NoError(t, <-in.play(ctx, logs, nil))
		settle(t, d, got, ref, quietMissing)
		finish(t, d, got)
		control = judge(t, ref, got, d, nil)
	})

	t.Run("kill9", func(t *testing.T) {
		fresh(t)
		d := newDeployment(t, "kill9", logs)
		got := newOutput()
		writing := in.play(ctx, logs, nil)
		var writeErr error
		done := false
		for kills := 0; !done || kills < cfg.liveKills; kills++ {
			p := d.start()
			select {
			case <-p.done:
			case <-time.After(between(r, 500*time.Millisecond, 1500*time.Millisecond)):
			}
			p.kill(t)
			got.scan(t, d)
			if !done {
				select {
				case err, ok := <-writing:
					if ok {
						writeErr = err
					}
					done = true
				default:
				}
			}
		}
		require.NoError(t, writeErr)
		d.start().waitReady(t)
		settle(t, d, got, ref, quietMissing)
		finish(t, d, got)
		judge(t, ref, got, d, control)
	})

	t.Run("sigterm_mid_turn", func(t *testing.T) {
		fresh(t)
		d := newDeployment(t, "sigterm", logs)
		got := newOutput()
		midTurn := make(chan struct{}, 1)
		writing := in.play(ctx, logs, midTurn)
		every := cfg.liveDur / time.Duration(cfg.terms+2)
		var writeErr error
	stops:
		for {
			p := d.start()
			p.waitReady(t)
			// Let it read a while, then stop it right after a tool call was written (its result
			// not yet): the Claude Code turn is open.
			select {
			case writeErr = <-writing:
				break stops
			case <-time.After(between(r, every/2, every)):
			}
			select {
			case <-midTurn: // drop a signal from before
			default:
			}
			select {
			case writeErr = <-writing:
				break stops
			case <-midTurn:
			}
			p.term(t)
			got.scan(t, d)
		}
		require.NoError(t, writeErr)
		stopped := len(d.runs) - 1
		t.Logf("%d SIGTERMs mid-turn", stopped)
		require.Positive(t, stopped, "no stop mid-turn while the sessions were written")
		settle(t, d, got, ref, quietMissing)
		finish(t, d, got)
		judge(t, ref, got, d, control)
	})
}
