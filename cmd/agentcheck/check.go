// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// This file is the pure part of the check: events, spans and ccusage's
// sessions in, one report per agent out. No I/O.

// tokens is a token count the way ccusage reports it: input net of cache
// reads and writes, output including reasoning.
type tokens struct {
	Input, Output, CacheRead, CacheCreation int64
}

func (t *tokens) add(o tokens) {
	t.Input += o.Input
	t.Output += o.Output
	t.CacheRead += o.CacheRead
	t.CacheCreation += o.CacheCreation
}

func (t tokens) String() string {
	return fmt.Sprintf("in %d out %d cr %d cw %d", t.Input, t.Output, t.CacheRead, t.CacheCreation)
}

// eventTokens is an event's usage in ccusage's terms.
func eventTokens(ev *agentevent.Event) tokens {
	read, create := agentevent.Value(ev.TokensCached), agentevent.Value(ev.TokensCacheCreation)
	return tokens{
		Input:         agentevent.Value(ev.TokensInput) - read - create,
		Output:        agentevent.Value(ev.TokensOutput),
		CacheRead:     read,
		CacheCreation: create,
	}
}

// ccSession is one session of `ccusage <agent> session --json --offline`.
type ccSession struct {
	// Key names the session the way ccusage does (see ccusageKey).
	Key    string
	Tokens tokens
	// Reasoning: Gemini's thoughts and OpenCode's reasoning tokens, which
	// ccusage leaves out of outputTokens (its totalTokens has them).
	Reasoning int64
}

// Definitions: each documented reason a session's figures may differ, and
// the only ones the check accepts (README.md, "Definitions").
const (
	// defReasoning: the GenAI conventions count reasoning in output;
	// ccusage's Gemini and OpenCode outputTokens leave thoughts / reasoning
	// out. The check adds them back (totalTokens − input − cache − output)
	// before comparing.
	defReasoning = "reasoning-in-output"
	// defCopyOnce: a Gemini chat present under two project directories (the
	// hash and the named one) is one chat; ccusage lists it (and counts it)
	// once per copy. Identical ccusage sessions under one key count once.
	defCopyOnce = "chat-copy-counted-once"
	// defFileNames: ccusage names a session by its file where the file name
	// is not the session id (Codex rollouts, Pi sessions, Claude Code flat
	// agent-<id>.jsonl files): its sessions are matched to ours through the
	// files our events came from.
	defFileNames = "ccusage-session-by-file"
	// defCopilotNoShutdown: ccusage reads a Copilot CLI session's usage from
	// its session.shutdown record only; a session without one (still
	// running, or an older CLI) has no ccusage session, and its log carries
	// per-response output tokens only. Such a session is accepted when its
	// events carry output tokens and nothing else.
	defCopilotNoShutdown = "copilot-output-only-without-shutdown"
)

// ccusageKey is the name ccusage gives the session a file belongs to: for
// Claude Code the main transcript's name (a subagent file under
// <session>/subagents/ counts with its session, a flat agent-<id>.jsonl is a
// session of its own), for Codex the rollout file's name, for Pi the part of
// the file name after the first "_" (files are <time>_<id>.jsonl); for the
// others (Gemini, OpenCode) the session id itself.
func ccusageKey(src agentevent.Source, logFile, sessionID string) string {
	base := strings.TrimSuffix(filepath.Base(logFile), filepath.Ext(logFile))
	switch src {
	case agentevent.SourceClaudeCode:
		if filepath.Base(filepath.Dir(logFile)) == "subagents" {
			return filepath.Base(filepath.Dir(filepath.Dir(logFile)))
		}
		return base
	case agentevent.SourceCodex:
		return base
	case agentevent.SourcePi:
		if _, after, ok := strings.Cut(base, "_"); ok {
			return after
		}
		return base
	}
	return sessionID
}

// span is a decoded span with what the check needs.
type span struct {
	traceID, spanID, parentID string
	name                      string
	service                   string
	start, end                pcommon.Timestamp
	attrs                     map[string]any
}

func spansOf(td ptrace.Traces) []span {
	var out []span
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		svc := ""
		if v, ok := rs.Resource().Attributes().Get(agentevent.ResourceServiceName); ok {
			svc = v.Str()
		}
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				s := ss.At(k)
				sp := span{
					traceID: s.TraceID().String(), spanID: s.SpanID().String(), name: s.Name(), service: svc,
					start: s.StartTimestamp(), end: s.EndTimestamp(), attrs: s.Attributes().AsRaw(),
				}
				if !s.ParentSpanID().IsEmpty() {
					sp.parentID = s.ParentSpanID().String()
				}
				out = append(out, sp)
			}
		}
	}
	return out
}

func (s *span) str(k string) string {
	v, _ := s.attrs[k].(string)
	return v
}

func (s *span) num(k string) int64 {
	v, _ := s.attrs[k].(int64)
	return v
}

func (s *span) op() string { return s.str("gen_ai.operation.name") }

// spanTokens is a chat span's usage in ccusage's terms.
func spanTokens(s *span) tokens {
	read, create := s.num(agentevent.AttrTokensCached), s.num(agentevent.AttrTokensCacheCreation)
	return tokens{
		Input:         s.num(agentevent.AttrTokensInput) - read - create,
		Output:        s.num(agentevent.AttrTokensOutput),
		CacheRead:     read,
		CacheCreation: create,
	}
}

// sessionRow is one session's tokens three ways.
type sessionRow struct {
	Session     string
	Events      tokens
	Spans       tokens
	Ccusage     tokens
	HasCcusage  bool
	Definitions []string // the definitions applied to the ccusage figures
	Problem     string   // an unexplained difference, "" when none
}

// report is one agent's table.
type report struct {
	Agent          string
	Sessions       int
	TurnsByStatus  map[string]int
	Events         int
	Unparsed       int
	DuplicateIDs   int
	UnmarkedOpen   int
	OrphanSpans    int
	BadRootTraces  int
	RootEndsEarly  int
	Rows           []sessionRow
	UnmatchedCcKey []string // ccusage sessions no event of ours belongs to
	Notes          []string
}

// failures lists what makes the check fail for this agent.
func (r *report) failures() []string {
	var f []string
	add := func(n int, what string) {
		if n > 0 {
			f = append(f, fmt.Sprintf("%s: %d %s", r.Agent, n, what))
		}
	}
	add(r.Unparsed, "unparsed records")
	add(r.DuplicateIDs, "duplicate event ids")
	add(r.UnmarkedOpen, "tool calls unanswered and not marked in_progress")
	add(r.OrphanSpans, "orphan spans")
	add(r.BadRootTraces, "traces without exactly one root")
	add(r.RootEndsEarly, "root spans ending before a child")
	for _, row := range r.Rows {
		if row.Problem != "" {
			f = append(f, fmt.Sprintf("%s: session %s: %s", r.Agent, row.Session, row.Problem))
		}
	}
	for _, k := range r.UnmatchedCcKey {
		f = append(f, fmt.Sprintf("%s: ccusage session %s has no events", r.Agent, k))
	}
	return f
}

// analyze builds the report of one agent from its events, the spans of its
// service and ccusage's sessions (nil: ccusage does not read this agent).
func analyze(src agentevent.Source, events []agentevent.Event, spans []span, cc []ccSession) *report {
	r := &report{Agent: src.ServiceName(), TurnsByStatus: map[string]int{}}
	r.Events = len(events)

	sessions := map[string]bool{}
	seen := map[string]int{}
	calls := map[string]agentevent.Event{} // session/call id → the call
	answered := map[string]bool{}
	evTokens := map[string]*tokens{}
	keySessions := map[string]map[string]bool{} // ccusage key → our sessions
	for i := range events {
		ev := &events[i]
		sessions[ev.SessionID] = true
		if ev.Unparsed != "" {
			r.Unparsed++
		}
		id := ev.SessionID + "/" + ev.EventID
		if seen[id]++; seen[id] == 2 {
			r.DuplicateIDs++
		}
		if ev.ToolCallID != "" {
			k := ev.SessionID + "/" + ev.ToolCallID
			switch ev.Type {
			case agentevent.TypeToolCall:
				calls[k] = *ev
			case agentevent.TypeToolResult:
				answered[k] = true
			}
		}
		if evTokens[ev.SessionID] == nil {
			evTokens[ev.SessionID] = &tokens{}
		}
		evTokens[ev.SessionID].add(eventTokens(ev))
		key := ccusageKey(src, ev.LogFile, ev.SessionID)
		if keySessions[key] == nil {
			keySessions[key] = map[string]bool{}
		}
		keySessions[key][ev.SessionID] = true
	}
	r.Sessions = len(sessions)

	// Spans: turns, structure, open calls, chat tokens.
	byTrace := map[string][]*span{}
	ids := map[string]bool{}
	openSpans := map[string]string{} // session/call id → the tool span's status
	spTokens := map[string]*tokens{}
	for i := range spans {
		s := &spans[i]
		byTrace[s.traceID] = append(byTrace[s.traceID], s)
		ids[s.traceID+"/"+s.spanID] = true
		switch s.op() {
		case "invoke_agent":
			if s.parentID == "" {
				r.TurnsByStatus[s.str("agent.turn.status")]++
			}
		case "execute_tool":
			openSpans[s.str(agentevent.AttrSessionID)+"/"+s.str(agentevent.AttrToolCallID)] = s.str(agentevent.AttrToolStatus)
		case "chat":
			sess := s.str(agentevent.AttrSessionID)
			if spTokens[sess] == nil {
				spTokens[sess] = &tokens{}
			}
			spTokens[sess].add(spanTokens(s))
		}
	}
	for k := range calls {
		if !answered[k] && openSpans[k] != string(agentevent.ToolInProgress) {
			r.UnmarkedOpen++
		}
	}
	for _, ss := range byTrace {
		roots := 0
		var root *span
		for _, s := range ss {
			if s.parentID == "" {
				roots++
				root = s
			} else if !ids[s.traceID+"/"+s.parentID] {
				r.OrphanSpans++
			}
		}
		if roots != 1 {
			r.BadRootTraces++
			continue
		}
		for _, s := range ss {
			if s != root && s.end > root.end {
				r.RootEndsEarly++
				break
			}
		}
	}

	// ccusage: its sessions grouped onto ours.
	ccTokens := map[string]*tokens{}
	ccDefs := map[string]map[string]bool{}
	if cc != nil {
		byKey := map[string][]ccSession{}
		var keys []string
		for _, s := range cc {
			if byKey[s.Key] == nil {
				keys = append(keys, s.Key)
			}
			byKey[s.Key] = append(byKey[s.Key], s)
		}
		for _, k := range keys {
			group := byKey[k]
			var defs []string
			if len(group) > 1 && allSame(group) {
				group = group[:1]
				defs = append(defs, defCopyOnce)
			}
			var t tokens
			for _, s := range group {
				t.add(s.Tokens)
				if s.Reasoning != 0 {
					t.Output += s.Reasoning
					defs = append(defs, defReasoning)
				}
			}
			ours := keySessions[k]
			if len(ours) == 0 {
				if t != (tokens{}) {
					r.UnmatchedCcKey = append(r.UnmatchedCcKey, k)
				}
				continue
			}
			if len(ours) != 1 || !ours[k] {
				defs = append(defs, defFileNames)
			}
			// A key whose events span several of our sessions (not seen):
			// its figures go to the first, and the difference shows.
			sess := slices.Sorted(mapKeys(ours))[0]
			if ccTokens[sess] == nil {
				ccTokens[sess] = &tokens{}
				ccDefs[sess] = map[string]bool{}
			}
			ccTokens[sess].add(t)
			for _, d := range defs {
				ccDefs[sess][d] = true
			}
		}
	}

	for _, sess := range slices.Sorted(mapKeys(sessions)) {
		row := sessionRow{Session: sess}
		if t := evTokens[sess]; t != nil {
			row.Events = *t
		}
		if t := spTokens[sess]; t != nil {
			row.Spans = *t
		}
		if t := ccTokens[sess]; t != nil {
			row.Ccusage, row.HasCcusage = *t, true
			row.Definitions = slices.Sorted(mapKeys(ccDefs[sess]))
		}
		if cc != nil && !row.HasCcusage && src == agentevent.SourceCopilotCLI && row.Events.Output > 0 &&
			row.Events == (tokens{Output: row.Events.Output}) {
			row.Ccusage = row.Events
			row.Definitions = []string{defCopilotNoShutdown}
		}
		switch {
		case row.Events != row.Spans:
			row.Problem = fmt.Sprintf("events (%s) and chat spans (%s) differ", row.Events, row.Spans)
		case cc != nil && row.Ccusage != row.Events:
			row.Problem = fmt.Sprintf("events (%s) and ccusage (%s) differ", row.Events, row.Ccusage)
		}
		r.Rows = append(r.Rows, row)
	}
	return r
}

func allSame(g []ccSession) bool {
	for _, s := range g[1:] {
		if s != g[0] {
			return false
		}
	}
	return true
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
