// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/redact"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/owners"
)

// spanContentAttrs are the span attributes that carry content (prompts,
// responses, instructions, tool arguments and results): dropped unless
// include_content is set, never redacted when kept (as agent_log's
// content).
var spanContentAttrs = []string{
	agentevent.AttrInputMessages,
	agentevent.AttrOutputMessages,
	agentevent.AttrSystemInstructions,
	agentevent.AttrToolCallArguments,
	agentevent.AttrToolCallResult,
	"user_prompt",
}

// Operation names (agentevent.AttrOperationName) of the spans the tool
// outcome carry and the chat naming look for.
const (
	opExecuteTool = "execute_tool"
	opChat        = "chat"
)

// processTraces normalizes the native spans of known agents in place and
// applies the one-session-one-source rule to them. The owners the batch
// decided are saved before it is handed on.
func (p *nativeProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	had := td.SpanCount() > 0
	txn := p.table.Begin()
	var (
		err        error
		dropped    bool
		executions []ptrace.Span
		chats      []ptrace.Span
	)
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len() && err == nil; i++ {
		rs := rss.At(i)
		var res *resourceInfo
		service := ""
		if v, ok := rs.Resource().Attributes().Get(agentevent.ResourceServiceName); ok {
			service = v.AsString()
		}
		sss := rs.ScopeSpans()
		var seen *agentDef
		for j := 0; j < sss.Len() && err == nil; j++ {
			ss := sss.At(j)
			scope := ss.Scope().Name()
			agent := p.reg.match(service, scope, true)
			if agent == nil {
				continue
			}
			seen = agent
			if res == nil {
				r := liftResource(rs.Resource())
				res = &r
			}
			ss.Spans().RemoveIf(func(s ptrace.Span) bool {
				if err != nil {
					return false
				}
				var (
					patch agentevent.SpanPatch
					ok    bool
				)
				if agent.normalize != nil {
					patch, ok = agent.normalize(liftSpan(res, scope, s))
				}
				if ok && patch.SessionID != "" {
					src := patch.Source
					if src == "" {
						src = agent.source
					}
					k := owners.Key{Source: string(src), Session: patch.SessionID}
					at := s.EndTimestamp()
					if at == 0 {
						at = s.StartTimestamp()
					}
					admitted, e := txn.Admit(ctx, k, owners.Native, at.AsTime())
					if e == nil && admitted {
						e = txn.MarkSpans(ctx, k)
					}
					if e != nil {
						err = e
						return false
					}
					if !admitted {
						p.dropOtherSource(ctx, k, owners.Native)
						dropped = true
						return true
					}
				}
				if ok {
					applyPatch(s, patch)
					p.tel.AgentNativeSpansNormalized.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String("agent", string(agent.source)))))
					if s.Name() == agentevent.SpanToolExecution {
						executions = append(executions, s)
					}
					if unnamedChat(s) {
						chats = append(chats, s)
					}
				}
				p.traces.add(hexID(s.TraceID()))
				a := s.Attributes()
				a.PutStr(agentevent.AttrOrigin, agentevent.OriginNative)
				if !p.cfg.IncludeContent {
					for _, key := range spanContentAttrs {
						a.Remove(key)
					}
				}
				if p.cfg.Redact {
					redactSpanAttrs(a)
				}
				return false
			})
		}
		if seen != nil {
			nameService(rs.Resource(), service, seen.source)
		}
	}
	if err != nil {
		return td, err
	}
	if err := txn.Commit(ctx); err != nil {
		return td, err
	}
	carryToolOutcomes(td, executions)
	nameChats(td, chats)
	if dropped {
		td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
			rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
			return rs.ScopeSpans().Len() == 0
		})
		if had && td.SpanCount() == 0 {
			return td, processorhelper.ErrSkipProcessingData
		}
	}
	return td, nil
}

// nameService gives a resource of an agent's own spans the service.name
// agentotel's traces of that agent carry (claude-code, codex, copilot-cli),
// so that span_metrics, the alerts (invoke_agent <service.name>) and the
// dashboard group both alike; the name the agent sent (codex-app-server,
// Codex Desktop, claude-code-desktop, github-copilot, …) stays as
// agent.entrypoint, as the files' originator does.
func nameService(res pcommon.Resource, sent string, source agentevent.Source) {
	want := source.ServiceName()
	if sent == want {
		return
	}
	a := res.Attributes()
	if sent != "" {
		if _, ok := a.Get(agentevent.AttrEntrypoint); !ok {
			a.PutStr(agentevent.AttrEntrypoint, sent)
		}
	}
	a.PutStr(agentevent.ResourceServiceName, want)
}

// applyPatch changes s as a normalizer asked.
func applyPatch(s ptrace.Span, p agentevent.SpanPatch) {
	if p.Name != "" {
		s.SetName(p.Name)
	}
	if p.Kind != 0 {
		s.SetKind(ptrace.SpanKind(p.Kind))
	}
	a := s.Attributes()
	for _, k := range p.Remove {
		a.Remove(k)
	}
	for k, v := range p.Set {
		switch x := v.(type) {
		case string:
			a.PutStr(k, x)
		case bool:
			a.PutBool(k, x)
		case int64:
			a.PutInt(k, x)
		case int:
			a.PutInt(k, int64(x))
		case float64:
			a.PutDouble(k, x)
		case []string:
			sl := a.PutEmptySlice(k)
			sl.EnsureCapacity(len(x))
			for _, e := range x {
				sl.AppendEmpty().SetStr(e)
			}
		}
	}
	if p.Error {
		s.Status().SetCode(ptrace.StatusCodeError)
		s.Status().SetMessage(p.ErrorMessage)
	}
}

// redactSpanAttrs replaces the credentials internal/redact recognizes in
// every string attribute but content.
func redactSpanAttrs(a pcommon.Map) {
	for k, v := range a.All() {
		if v.Type() != pcommon.ValueTypeStr || isSpanContent(k) {
			continue
		}
		if r := redact.String(v.Str()); r != v.Str() {
			v.SetStr(r)
		}
	}
}

func isSpanContent(k string) bool {
	return slices.Contains(spanContentAttrs, k)
}

// carryToolOutcomes puts the outcome of each Claude Code tool execution
// (agent.tool.status, and on failure Error status and error.type) on the
// execute_tool span of the same call in the batch: Claude Code states it on
// the child only, while the execute_tool span is the one that names the
// tool, so the one span_metrics counts per tool.
func carryToolOutcomes(td ptrace.Traces, executions []ptrace.Span) {
	if len(executions) == 0 {
		return
	}
	type callKey struct {
		trace pcommon.TraceID
		call  string
	}
	tools := map[callKey]ptrace.Span{}
	bySpan := map[pcommon.SpanID]ptrace.Span{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				if op, ok := s.Attributes().Get(agentevent.AttrOperationName); !ok || op.Str() != opExecuteTool {
					continue
				}
				bySpan[s.SpanID()] = s
				if id, ok := s.Attributes().Get(agentevent.AttrToolCallID); ok && id.Str() != "" {
					tools[callKey{s.TraceID(), id.Str()}] = s
				}
			}
		}
	}
	for _, ex := range executions {
		var tool ptrace.Span
		found := false
		if id, ok := ex.Attributes().Get(agentevent.AttrToolCallID); ok && id.Str() != "" {
			tool, found = tools[callKey{ex.TraceID(), id.Str()}]
		}
		if !found {
			tool, found = bySpan[ex.ParentSpanID()]
		}
		if !found {
			continue
		}
		if st, ok := ex.Attributes().Get(agentevent.AttrToolStatus); ok {
			tool.Attributes().PutStr(agentevent.AttrToolStatus, st.Str())
		}
		if ex.Status().Code() == ptrace.StatusCodeError {
			tool.Status().SetCode(ptrace.StatusCodeError)
			tool.Status().SetMessage(ex.Status().Message())
			if et, ok := ex.Attributes().Get(agentevent.AttrErrorType); ok {
				tool.Attributes().PutStr(agentevent.AttrErrorType, et.Str())
			}
		}
	}
}

// unnamedChat reports whether s is a normalized chat span that names no
// model (Codex's completed response: its model is on the sampling request
// above it).
func unnamedChat(s ptrace.Span) bool {
	if op, ok := s.Attributes().Get(agentevent.AttrOperationName); !ok || op.Str() != opChat {
		return false
	}
	_, named := s.Attributes().Get(agentevent.AttrRequestModel)
	return !named
}

// maxModelHops bounds the walk from a chat span up to the span that names
// its model.
const maxModelHops = 8

// nameChats gives each chat span that names no model the model of its
// nearest ancestor in the batch that has one (attribute model or
// gen_ai.request.model), so that gen_ai_cost can price it and the span is
// named chat <model> like ours.
func nameChats(td ptrace.Traces, chats []ptrace.Span) {
	if len(chats) == 0 {
		return
	}
	bySpan := map[pcommon.SpanID]ptrace.Span{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				bySpan[s.SpanID()] = s
			}
		}
	}
	for _, c := range chats {
		at := c
		for range maxModelHops {
			p, ok := bySpan[at.ParentSpanID()]
			if !ok {
				break
			}
			if m := spanModel(p); m != "" {
				a := c.Attributes()
				a.PutStr(agentevent.AttrRequestModel, m)
				if _, ok := a.Get(agentevent.AttrModel); !ok {
					a.PutStr(agentevent.AttrModel, m)
				}
				c.SetName(opChat + " " + m)
				break
			}
			at = p
		}
	}
}

// spanModel is the model a span names, "" when none.
func spanModel(s ptrace.Span) string {
	for _, k := range []string{agentevent.AttrRequestModel, "model"} {
		if v, ok := s.Attributes().Get(k); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			return v.Str()
		}
	}
	return ""
}
