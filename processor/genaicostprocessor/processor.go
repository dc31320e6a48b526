// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package genaicostprocessor

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/metadata"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/pricing"
)

const (
	// SourceLog: the agent's own log stated the cost (Pi, OpenCode, …).
	SourceLog = "log"
	// SourceTable: priced from the embedded table.
	SourceTable = "table"
	// SourceConfig: priced from a model price set in the configuration.
	SourceConfig = "config"
	// SourceFallback: the response names no model; priced as the agent's
	// fallback model (Config.FallbackModels).
	SourceFallback = "fallback"

	opChat        = "chat"
	opInvokeAgent = "invoke_agent"

	reasonUnknownModel = "unknown_model"
	reasonNoModel      = "no_model"

	// maxWarnedModels bounds the set of unknown models already logged.
	maxWarnedModels = 1024
	// maxLongResponses bounds the response ids remembered as priced above
	// their model's threshold.
	maxLongResponses = 4096
)

type costProcessor struct {
	logger *zap.Logger
	table  *pricing.Table
	tel    *metadata.TelemetryBuilder
	// fallback is the model of a response that names none, by service.name.
	fallback map[string]string

	priced   map[string]metric.MeasurementOption
	unpriced map[string]metric.MeasurementOption

	mu     sync.Mutex
	warned map[string]bool
	// long holds the ids of responses whose input exceeded their model's
	// threshold: Claude Code writes a streamed response as several records,
	// the input on the first and later output increments on the others,
	// which must be priced at the same (higher) rates.
	long      map[string]bool
	longOrder []string
}

func newCostProcessor(set processor.Settings, cfg *Config) (*costProcessor, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	p := &costProcessor{
		logger:   set.Logger,
		table:    cfg.table(),
		fallback: map[string]string{},
		tel:      tel,
		priced:   map[string]metric.MeasurementOption{},
		unpriced: map[string]metric.MeasurementOption{},
		warned:   map[string]bool{},
		long:     map[string]bool{},
	}
	for svc, model := range cfg.FallbackModels {
		if model != "" {
			p.fallback[svc] = model
		}
	}
	for _, s := range []string{SourceLog, SourceTable, SourceConfig, SourceFallback} {
		p.priced[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("source", s)))
	}
	for _, r := range []string{reasonUnknownModel, reasonNoModel} {
		p.unpriced[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r)))
	}
	return p, nil
}

func (p *costProcessor) shutdown(context.Context) error {
	p.tel.Shutdown()
	return nil
}

func (p *costProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		svc := str(rl.Resource().Attributes(), agentevent.ResourceServiceName)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				p.price(ctx, lrs.At(k).Attributes(), svc)
			}
		}
	}
	return ld, nil
}

// span is what the roll-up needs of a span.
type span struct {
	parent     pcommon.SpanID
	invoke     bool
	attrs      pcommon.Map
	cost       float64
	hasCost    bool
	pricedHere bool
}

func (p *costProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	spans := map[pcommon.SpanID]*span{}
	var chats []*span
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		svc := str(rss.At(i).Resource().Attributes(), agentevent.ResourceServiceName)
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				s := ss.At(k)
				a := s.Attributes()
				op, _ := a.Get(agentevent.AttrOperationName)
				sp := &span{parent: s.ParentSpanID(), invoke: op.Str() == opInvokeAgent, attrs: a}
				spans[s.SpanID()] = sp
				if op.Str() != opChat {
					continue
				}
				_, stated := a.Get(agentevent.AttrCostUSD)
				sp.cost, sp.hasCost = p.price(ctx, a, svc)
				sp.pricedHere = sp.hasCost && !stated
				chats = append(chats, sp)
			}
		}
	}
	rollUp(spans, chats)
	return td, nil
}

// rollUp sets, on every invoke_agent span above a chat span this call
// priced, the cost of all the chat spans below it in the batch (the
// agent_span connector emits a turn, subagents included, as one batch).
func rollUp(spans map[pcommon.SpanID]*span, chats []*span) {
	sums := map[*span]float64{}
	dirty := map[*span]bool{}
	for _, c := range chats {
		if !c.hasCost {
			continue
		}
		seen := 0
		for id := c.parent; !id.IsEmpty() && seen < len(spans); seen++ {
			anc, ok := spans[id]
			if !ok {
				break
			}
			if anc.invoke {
				sums[anc] += c.cost
				if c.pricedHere {
					dirty[anc] = true
				}
			}
			id = anc.parent
		}
	}
	for s := range dirty {
		s.attrs.PutDouble(agentevent.AttrTurnCostUSD, sums[s])
	}
}

// price gives the model response whose attributes are a, from the agent
// whose service.name is svc, its cost, unless it has one: a cost the
// agent's log stated is kept (and its source recorded). A response that
// names no model is priced as svc's fallback model, if it has one. It
// returns the cost and whether there is one.
func (p *costProcessor) price(ctx context.Context, a pcommon.Map, svc string) (float64, bool) {
	if v, ok := a.Get(agentevent.AttrCostUSD); ok {
		if _, has := a.Get(agentevent.AttrCostSource); !has {
			a.PutStr(agentevent.AttrCostSource, SourceLog)
			p.tel.GenAiCostPriced.Add(ctx, 1, p.priced[SourceLog])
		}
		return number(v), true
	}
	u, ok := usage(a)
	if !ok || u.Total() == 0 {
		return 0, false
	}
	model := str(a, agentevent.AttrModel)
	if model == "" {
		model = str(a, agentevent.AttrRequestModel)
	}
	source := ""
	if model == "" {
		if model = p.fallback[svc]; model == "" {
			p.tel.GenAiCostUnpriced.Add(ctx, 1, p.unpriced[reasonNoModel])
			return 0, false
		}
		source = SourceFallback
	}
	price, name, ok := p.table.Lookup(model)
	if !ok {
		p.tel.GenAiCostUnpriced.Add(ctx, 1, p.unpriced[reasonUnknownModel])
		p.warnOnce(model)
		return 0, false
	}
	cost := price.CostAt(u, p.above(price, u, str(a, agentevent.AttrResponseID)))
	switch {
	case source != "":
	case p.table.Overridden(name):
		source = SourceConfig
	default:
		source = SourceTable
	}
	a.PutDouble(agentevent.AttrCostUSD, cost)
	a.PutStr(agentevent.AttrCostSource, source)
	p.tel.GenAiCostPriced.Add(ctx, 1, p.priced[source])
	return cost, true
}

// above tells whether a response is priced at its model's rates above the
// threshold, remembering the responses that are for their later records.
func (p *costProcessor) above(price pricing.Price, u pricing.Usage, responseID string) bool {
	if price.Threshold <= 0 {
		return false
	}
	if u.Input > price.Threshold {
		if responseID != "" {
			p.mu.Lock()
			if !p.long[responseID] {
				p.long[responseID] = true
				p.longOrder = append(p.longOrder, responseID)
				if len(p.longOrder) > maxLongResponses {
					delete(p.long, p.longOrder[0])
					p.longOrder = p.longOrder[1:]
				}
			}
			p.mu.Unlock()
		}
		return true
	}
	if u.Input > 0 || responseID == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.long[responseID]
}

func (p *costProcessor) warnOnce(model string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.warned[model] || len(p.warned) >= maxWarnedModels {
		return
	}
	p.warned[model] = true
	p.logger.Warn("Model not in the price table; its responses get no cost (add it under `models` or `aliases`)",
		zap.String("model", model), zap.String("table_date", pricing.TableDate))
}

// usage reads the token usage of a model response; ok is false when the
// attributes carry none.
func usage(a pcommon.Map) (u pricing.Usage, ok bool) {
	for _, f := range []struct {
		key string
		dst *int64
	}{
		{agentevent.AttrTokensInput, &u.Input},
		{agentevent.AttrTokensOutput, &u.Output},
		{agentevent.AttrTokensCached, &u.CacheRead},
		{agentevent.AttrTokensCacheCreation, &u.CacheCreation},
		{agentevent.AttrTokensCacheCreation1h, &u.CacheCreation1h},
	} {
		if v, has := a.Get(f.key); has {
			*f.dst = int64(number(v))
			ok = true
		}
	}
	return u, ok
}

func number(v pcommon.Value) float64 {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return float64(v.Int())
	case pcommon.ValueTypeDouble:
		return v.Double()
	}
	return 0
}

func str(a pcommon.Map, k string) string {
	if v, ok := a.Get(k); ok {
		return v.Str()
	}
	return ""
}
