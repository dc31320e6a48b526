// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// assembler groups agent events into turns and subagent runs (add), and
// emits the complete groups as spans (close), through the pure span model
// (internal/spanmodel). It does no I/O and reads no clock: callers pass
// the wall-clock time. It holds one type per concern, each with the
// narrow part of the others it needs:
//
//   - store: the state of the sessions in memory, and every change of it;
//   - preambles: the events that wait for a prompt of their thread;
//   - rules and sched: when a group is complete, its deadline, and which
//     groups a close pass looks at;
//   - links: resolving subagent links, with the anchors;
//   - evictor: memory under max_cached_sessions, and the sessions out of
//     memory with open work;
//   - saved: storage.
type assembler struct {
	opts      spanmodel.MapOptions
	store     *sessionStore
	preambles *preambles
	rules     *closeRules
	sched     *scheduler
	links     *linker
	evictor   *evictor
	saved     *persistence
	// keys holds the attribute keys of the events held (unitMemory.own).
	keys keyInterner
}

func newAssembler(idleTimeout time.Duration, opts spanmodel.MapOptions) *assembler {
	store := newSessionStore()
	rules := &closeRules{idleTimeout: idleTimeout, maxOpenTool: max(idleTimeout, defaultMaxOpenToolDuration), store: store}
	sched := newScheduler(store, rules)
	book := newAnchorBook()
	ev := newEvictor(idleTimeout, store)
	saved := newPersistence(store, book, ev, sched)
	ev.plan, ev.storage = sched, saved
	pre := newPreambles(idleTimeout, store)
	store.source, store.use, store.groups, store.waiting = saved, ev, sched, pre
	return &assembler{
		opts:      opts,
		store:     store,
		preambles: pre,
		rules:     rules,
		sched:     sched,
		links:     &linker{store: store, book: book, sleepers: ev},
		evictor:   ev,
		saved:     saved,
	}
}

// addResult says what add did with an event.
type addResult int

const (
	added addResult = iota
	// unparsed: an unparsed record never becomes part of a trace.
	unparsed
	// replayed: the event went out before in a unit now closed (a record
	// delivered again, e.g. re-read after a crash).
	replayed
	// lateResult: the result of a tool call whose turn went out with the
	// call in_progress.
	lateResult
)

// closed is the outcome of one close pass.
type closed struct {
	traces ptrace.Traces
	// statuses holds agent.turn.status of every root span emitted.
	statuses []string
	spans    int
	// duplicates counts spans left out because their id was emitted before.
	duplicates int
	// noTurn counts events dropped because no turn ever came for them.
	noTurn int
	// afterTurn are the late rows of turns that went out already that
	// made no span (see the README's Known limitations, "Late rows").
	afterTurn []afterTurn
	// units are the groups emitted, by their top unit, and why each closed
	// (the connector's debug log).
	units []closedGroup
	// replays and lateResults are what the batch's add dropped: events
	// emitted before, and tool results of calls whose turn went out
	// without them. Counted, like the others, once the pass is kept.
	replays     int
	lateResults []agentevent.Event
}

// afterTurn is what came of a turn after it went out and made no span: the
// turn, how many rows, the first row's event id.
type afterTurn struct {
	key   unitKey
	rows  int
	first string
}

// closedGroup is one group a close pass emitted.
type closedGroup struct {
	key    unitKey
	reason spanmodel.CloseReason
}

// openUnits is the number of open turns and subagent runs.
func (a *assembler) openUnits() int { return len(a.store.units) + a.evictor.sleepingUnits }
