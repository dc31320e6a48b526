// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
) // assembler groups agent events into turns and subagent runs, decides when
// each is complete, and hands complete groups to the pure span model
// (internal/spanmodel). It does no I/O and reads no clock: callers pass the
// wall-clock time. Its state is held by the types it embeds, one per
// concern; its methods are spread by concern over sessions.go (loading,
// changing and dropping sessions), closerules.go (when a group is
// complete), eviction.go, links.go, turns.go (adding events, close passes)
// and state.go (saving and reading back).
type assembler struct {
	idleTimeout time.Duration
	// maxOpenTool replaces idleTimeout for a group with a tool call open.
	maxOpenTool time.Duration
	opts        spanmodel.MapOptions

	sessionStore
	scheduler
	preambles
	anchorBook
	evictor
	persistence
}

// verifyPass, when set (tests), is shown the units each close pass looks at.
var verifyPass func(a *assembler, sorted []unitKey, now time.Time, shutdown bool)

func newAssembler(idleTimeout time.Duration, opts spanmodel.MapOptions) *assembler {
	return &assembler{
		idleTimeout:  idleTimeout,
		maxOpenTool:  max(idleTimeout, defaultMaxOpenToolDuration),
		opts:         opts,
		sessionStore: newSessionStore(),
		scheduler:    newScheduler(),
		preambles:    preambles{preambled: map[threadKey]*preambleEntry{}},
		anchorBook:   anchorBook{anchorIdx: map[anchorGroup][]anchor{}},
		evictor: evictor{
			lruIdx:        map[sessKey]*queued{},
			asleep:        map[sessKey]*sleeper{},
			waitingAsleep: map[anchorGroup]map[sessKey]time.Time{},
		},
		persistence: persistence{indexed: newIndexShards(), shardsToWrite: map[int]bool{}},
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
	// made no span (see the README, "Late rows").
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
func (a *assembler) openUnits() int { return len(a.units) + a.sleepingUnits }
