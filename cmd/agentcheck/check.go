// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
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
	// Cost is ccusage's totalCost (costUSD for Codex) in USD.
	Cost float64
	// ModelCosts is ccusage's cost by model (modelBreakdowns), by model
	// name as ccusageModel spells it.
	ModelCosts map[string]float64
	// Fallback: ccusage priced a model it marks isFallback (Codex).
	Fallback bool
	// Definitions were applied in making this session's figures (see
	// copilotRuns), not by ccusage.
	Definitions []string
}

// ccusageModel is a model name the way ccusage's breakdowns and our events
// can be compared: lower case, without ccusage's "[agent] " prefix.
func ccusageModel(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if strings.HasPrefix(name, "[") {
		if _, after, ok := strings.Cut(name, "] "); ok {
			name = after
		}
	}
	return name
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
	// its session.shutdown records only; a last run without one (the CLI
	// still running, or an older CLI), or a session without any, carries
	// per-response output tokens only. The check holds that output to
	// ccusage's price of it: it runs ccusage over the run closed by a
	// shutdown record it writes, stating per model the output of the
	// responses it reads that model for in the file (the response's own,
	// else its tool calls' tool.execution_complete, else the nearest record
	// naming one: copilotRuns, tailModels). A session whose responses no
	// record gives a model is accepted when its events carry output tokens
	// and nothing else (its dollars the table's price of those tokens, with
	// nothing to compare them to).
	defCopilotNoShutdown = "copilot-output-only-without-shutdown"
	// defStatedZero: an agent's log states $0 for a response (OpenCode's
	// free models, e.g. glm-4.7-free); a stated cost wins. ccusage ignores a
	// stated 0 and prices the model from its table. When every priced
	// response of a model in the session states $0, ccusage's cost of that
	// model (its modelBreakdowns) is left out before comparing.
	defStatedZero = "stated-zero-cost"
	// defSubagentCost: Kilo CLI adds a subagent session's cost to the
	// assistant message whose task tool ran it, and the child session's
	// messages carry that cost too; the events keep it out of the
	// message's cost (agent.cost.subagents_usd), ccusage counts it in. The
	// check takes it out of ccusage's figure for the session.
	defSubagentCost = "subagent-cost-once"
	// defFallback: a response that names no model (Codex 0.3x rollouts) is
	// priced as its agent's fallback model (gen_ai_cost fallback_models,
	// codex: gpt-5), as ccusage prices it and marks it isFallback. Not a
	// difference: the row says so, and both must mark the same sessions.
	defFallback = "fallback-model"
	// defCopilotRuns: a resumed Copilot CLI session is a series of runs,
	// each ending in a session.shutdown with its own run's usage; the events
	// count every run once, ccusage keeps each field's maximum over the
	// shutdowns. The check runs ccusage over each run's records alone and
	// compares with the sum of the runs, a last run without a shutdown
	// priced as defCopilotNoShutdown says (copilotRuns).
	defCopilotRuns = "copilot-runs-summed"
)

// Values of agentevent.AttrCostSource: where gen_ai_cost found a cost.
const (
	sourceLog      = "log"
	sourceFallback = "fallback"
)

// centEpsilon: two dollar figures agree when they are this close (float
// sums in another order, nothing more).
const centEpsilon = 1e-6

func sameDollars(a, b float64) bool {
	return math.Abs(a-b) <= centEpsilon+1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// The agents some of the check's definitions and the native captures'
// token counts are about.
const (
	claudeCode agentevent.Source = "claude_code"
	codex      agentevent.Source = "codex"
	copilotCLI agentevent.Source = "copilot_cli"
)

// ccusageKey is the name ccusage gives the session a file belongs to: the
// agent's rule (agents.Ccusage.SessionKey), else the session id itself.
func ccusageKey(src agentevent.Source, logFile, sessionID string) string {
	if d := agents.Lookup(src); d != nil && d.Ccusage != nil && d.Ccusage.SessionKey != nil {
		return d.Ccusage.SessionKey(logFile, sessionID)
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

func (s *span) op() string { return s.str(agentevent.AttrOperationName) }

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

// spanCost is a chat span's cost, and whether it has one.
func spanCost(s *span) (float64, bool) {
	v, ok := s.attrs[agentevent.AttrCostUSD].(float64)
	return v, ok
}

// dollars is one session's cost four ways.
type dollars struct {
	Events     float64 // summed over the events priced in the logs pipeline
	LogsChat   float64 // over the chat spans made of those events
	TracesChat float64 // over the chat spans priced in the traces pipeline
	Ccusage    float64 // ccusage's, with the definitions applied
	HasCcusage bool
	// CcusageReported is ccusage's own figure, before stated-zero-cost.
	CcusageReported float64
}

// sessionRow is one session's tokens three ways and its dollars four ways.
type sessionRow struct {
	Session     string
	Events      tokens
	Spans       tokens
	Ccusage     tokens
	HasCcusage  bool
	Definitions []string // the definitions applied to the ccusage figures
	Cost        dollars
	// CostDefinitions are the definitions applied to ccusage's dollars.
	CostDefinitions []string
	Problems        []string // unexplained differences
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
	for i := range r.Rows {
		row := &r.Rows[i]
		for _, p := range row.Problems {
			f = append(f, fmt.Sprintf("%s: session %s: %s", r.Agent, row.Session, p))
		}
	}
	for _, k := range r.UnmatchedCcKey {
		f = append(f, fmt.Sprintf("%s: ccusage session %s has no events", r.Agent, k))
	}
	return f
}

// analyze builds the report of one agent from its events (priced by
// gen_ai_cost in the logs pipeline), the spans of its service made of them,
// the spans of its service priced by gen_ai_cost in the traces pipeline,
// and ccusage's sessions (nil: ccusage does not read this agent).
func analyze(src agentevent.Source, events []agentevent.Event, spans, priced []span, cc []ccSession) *report {
	r := &report{Agent: src.ServiceName(), TurnsByStatus: map[string]int{}}
	r.Events = len(events)

	sessions := map[string]bool{}
	seen := map[string]int{}
	calls := map[string]agentevent.Event{} // session/call id → the call
	answered := map[string]bool{}
	evTokens := map[string]*tokens{}
	evCost := map[string]float64{}
	evWrites1h := map[string]int64{} // 1-hour cache writes, which cost more than 5-minute ones
	evSubagentsCost := map[string]float64{}
	fallback := map[string]bool{} // sessions with a response priced as a fallback model
	// zeroModels: per session, per model, whether every priced response
	// of that model states $0 (true) or one does not (false).
	zeroModels := map[string]map[string]bool{}
	keySessions := map[string]map[string]bool{} // ccusage key → our sessions
	for i := range events {
		ev := &events[i]
		sessions[ev.SessionID] = true
		if ev.Unparsed != "" {
			r.Unparsed++
		}
		id := ev.SessionID + "/" + ev.EventID
		seen[id]++
		if seen[id] == 2 {
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
		if v, ok := ev.Attributes[agentevent.AttrTokensCacheCreation1h].(int64); ok {
			evWrites1h[ev.SessionID] += v
		}
		if v, ok := ev.Attributes[agentevent.AttrSubagentsCostUSD].(float64); ok {
			evSubagentsCost[ev.SessionID] += v
		}
		if ev.CostUSD != nil {
			evCost[ev.SessionID] += *ev.CostUSD
			source, _ := ev.Attributes[agentevent.AttrCostSource].(string)
			if source == sourceFallback {
				fallback[ev.SessionID] = true
			}
			if zeroModels[ev.SessionID] == nil {
				zeroModels[ev.SessionID] = map[string]bool{}
			}
			m := ccusageModel(ev.Model)
			zero := source == sourceLog && *ev.CostUSD == 0
			if prev, seen := zeroModels[ev.SessionID][m]; !seen || prev {
				zeroModels[ev.SessionID][m] = zero
			}
		}
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
	logsChatCost := map[string]float64{}
	tracesChatCost := map[string]float64{}
	tracesWrites1h := map[string]int64{}
	for i := range priced {
		if s := &priced[i]; s.op() == "chat" {
			sess := s.str(agentevent.AttrSessionID)
			if c, ok := spanCost(s); ok {
				tracesChatCost[sess] += c
			}
			tracesWrites1h[sess] += s.num(agentevent.AttrTokensCacheCreation1h)
		}
	}
	for i := range spans {
		s := &spans[i]
		byTrace[s.traceID] = append(byTrace[s.traceID], s)
		ids[s.traceID+"/"+s.spanID] = true
		switch s.op() {
		case "invoke_agent":
			if s.parentID == "" {
				r.TurnsByStatus[s.str(agentevent.AttrTurnStatus)]++
			}
		case "execute_tool":
			openSpans[s.str(agentevent.AttrSessionID)+"/"+s.str(agentevent.AttrToolCallID)] = s.str(agentevent.AttrToolStatus)
		case "chat":
			sess := s.str(agentevent.AttrSessionID)
			if spTokens[sess] == nil {
				spTokens[sess] = &tokens{}
			}
			spTokens[sess].add(spanTokens(s))
			if c, ok := spanCost(s); ok {
				logsChatCost[sess] += c
			}
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
	ccCost := map[string]float64{}
	ccModelCosts := map[string]map[string]float64{}
	ccFallback := map[string]bool{}
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
			var cost float64
			modelCosts := map[string]float64{}
			isFallback := false
			for _, s := range group {
				defs = append(defs, s.Definitions...)
				t.add(s.Tokens)
				cost += s.Cost
				isFallback = isFallback || s.Fallback
				for m, c := range s.ModelCosts {
					modelCosts[m] += c
				}
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
			ccCost[sess] += cost
			ccFallback[sess] = ccFallback[sess] || isFallback
			if ccModelCosts[sess] == nil {
				ccModelCosts[sess] = map[string]float64{}
			}
			for m, c := range modelCosts {
				ccModelCosts[sess][m] += c
			}
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
		noShutdown := false
		if cc != nil && !row.HasCcusage && src == copilotCLI && row.Events.Output > 0 &&
			row.Events == (tokens{Output: row.Events.Output}) {
			row.Ccusage = row.Events
			row.Definitions = []string{defCopilotNoShutdown}
			noShutdown = true
		}
		switch {
		case row.Events != row.Spans:
			row.Problems = append(row.Problems, fmt.Sprintf("events (%s) and chat spans (%s) differ", row.Events, row.Spans))
		case cc != nil && row.Ccusage != row.Events:
			row.Problems = append(row.Problems, fmt.Sprintf("events (%s) and ccusage (%s) differ", row.Events, row.Ccusage))
		}

		// Dollars.
		row.Cost = dollars{Events: evCost[sess], LogsChat: logsChatCost[sess], TracesChat: tracesChatCost[sess]}
		costDefs := map[string]bool{}
		if fallback[sess] {
			costDefs[defFallback] = true
		}
		if row.HasCcusage {
			row.Cost.HasCcusage = true
			row.Cost.Ccusage = ccCost[sess]
			row.Cost.CcusageReported = ccCost[sess]
			for _, d := range row.Definitions {
				if d != defReasoning {
					costDefs[d] = true
				}
			}
			for m, allZero := range zeroModels[sess] {
				if c, ok := ccModelCosts[sess][m]; ok && allZero && c != 0 {
					row.Cost.Ccusage -= c
					costDefs[defStatedZero] = true
				}
			}
			if c := evSubagentsCost[sess]; c > 0 {
				row.Cost.Ccusage -= c
				costDefs[defSubagentCost] = true
			}
			if ccFallback[sess] != fallback[sess] {
				row.Problems = append(row.Problems, fmt.Sprintf("priced as a fallback model: here %t, by ccusage %t", fallback[sess], ccFallback[sess]))
			}
		} else if noShutdown {
			costDefs[defCopilotNoShutdown] = true
		}
		row.CostDefinitions = slices.Sorted(mapKeys(costDefs))
		if !sameDollars(row.Cost.Events, row.Cost.LogsChat) {
			row.Problems = append(row.Problems, fmt.Sprintf("the events' cost ($%.6f) and their chat spans' ($%.6f) differ", row.Cost.Events, row.Cost.LogsChat))
		}
		if !sameDollars(row.Cost.LogsChat, row.Cost.TracesChat) {
			p := fmt.Sprintf("gen_ai_cost in the logs pipeline ($%.6f) and in the traces pipeline ($%.6f) differ", row.Cost.LogsChat, row.Cost.TracesChat)
			if evWrites1h[sess] != tracesWrites1h[sess] {
				// What the traces placement cannot see: it prices what the
				// chat spans carry.
				p += fmt.Sprintf(" (the chat spans carry %d of the events' %d 1-hour cache write tokens)", tracesWrites1h[sess], evWrites1h[sess])
			}
			row.Problems = append(row.Problems, p)
		}
		if row.Cost.HasCcusage && !sameDollars(row.Cost.Events, row.Cost.Ccusage) {
			row.Problems = append(row.Problems, fmt.Sprintf("cost ($%.6f) and ccusage's ($%.6f) differ", row.Cost.Events, row.Cost.Ccusage))
		}
		r.Rows = append(r.Rows, row)
	}
	return r
}

func allSame(g []ccSession) bool {
	for _, s := range g[1:] {
		if !reflect.DeepEqual(s, g[0]) {
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
