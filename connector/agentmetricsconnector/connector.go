// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentmetricsconnector

import (
	"cmp"
	"container/list"
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/connector/agentmetricsconnector/internal/metadata"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// Attribute values and the scope of the metrics (their names and keys are
// agentevent's), and the reasons an event is not counted.
const (
	opChat      = "chat"
	tokenInput  = "input"
	tokenOutput = "output"

	scopeName = "github.com/agentotel/agentotel/connector/agentmetricsconnector"

	dropNotAgentEvent = "not_agent_event"
	dropSeriesLimit   = "series_limit"
)

// Bucket boundaries the GenAI conventions advise for the two histograms.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

type metricKind int

const (
	kindTokens metricKind = iota
	kindDuration
	kindCost
)

// seriesKey identifies one data point. No session, prompt or response id is
// ever part of it: those would make a series per session.
type seriesKey struct {
	kind       metricKind
	service    string
	provider   string
	model      string
	tokenType  string
	errorType  string
	costSource string
}

type histogram struct {
	buckets  []uint64
	count    uint64
	sum      float64
	min, max float64
	exemplar exemplar
}

type exemplar struct {
	value   float64
	time    pcommon.Timestamp
	session string
}

// thread is what duration measurement keeps of one session (or subagent).
type thread struct {
	key       threadKey
	last      time.Time // the last event's time
	response  string    // the response whose events are arriving
	respStart time.Time // the time of the event before that response
}

type threadKey struct{ service, session, agent string }

type metricsConnector struct {
	cfg    *Config
	next   consumer.Metrics
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	now    func() time.Time

	dropped map[string]metric.MeasurementOption

	mu       sync.Mutex
	start    pcommon.Timestamp
	hists    map[seriesKey]*histogram
	costs    map[seriesKey]float64
	threads  map[threadKey]*list.Element
	lru      *list.List
	warned   map[string]bool
	stopOnce sync.Once
	done     chan struct{}
	wg       sync.WaitGroup
}

var _ connector.Logs = (*metricsConnector)(nil)

func newConnector(set connector.Settings, cfg *Config, next consumer.Metrics) (*metricsConnector, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	c := &metricsConnector{
		cfg:     cfg,
		next:    next,
		logger:  set.Logger,
		tel:     tel,
		now:     time.Now,
		dropped: map[string]metric.MeasurementOption{},
		hists:   map[seriesKey]*histogram{},
		costs:   map[seriesKey]float64{},
		threads: map[threadKey]*list.Element{},
		lru:     list.New(),
		warned:  map[string]bool{},
		done:    make(chan struct{}),
	}
	for _, r := range []string{dropNotAgentEvent, dropSeriesLimit} {
		c.dropped[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r)))
	}
	err = tel.RegisterAgentMetricsSeriesCallback(func(_ context.Context, o metric.Int64Observer) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		o.Observe(int64(len(c.hists) + len(c.costs)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (*metricsConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (c *metricsConnector) Start(context.Context, component.Host) error {
	c.mu.Lock()
	c.start = pcommon.NewTimestampFromTime(c.now())
	c.mu.Unlock()
	c.wg.Go(func() {
		t := time.NewTicker(c.cfg.MetricsFlushInterval)
		defer t.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-t.C:
				if err := c.flush(context.Background()); err != nil {
					c.logger.Warn("Emitting the agent metrics failed; they go out again at the next flush", zap.Error(err))
				}
			}
		}
	})
	return nil
}

// Shutdown stops the flushing and emits the metrics one last time. It is
// safe before Start and more than once.
func (c *metricsConnector) Shutdown(ctx context.Context) error {
	var err error
	c.stopOnce.Do(func() {
		close(c.done)
		c.wg.Wait()
		err = c.flush(ctx)
		c.tel.Shutdown()
	})
	return err
}

func (c *metricsConnector) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		service := ""
		if v, ok := rl.Resource().Attributes().Get(agentevent.ResourceServiceName); ok {
			service = v.Str()
		}
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				ev, err := agentevent.Decode(lrs.At(k))
				if err != nil {
					c.drop(ctx, dropNotAgentEvent, err.Error())
					continue
				}
				svc := service
				if svc == "" {
					svc = ev.Source.ServiceName()
				}
				c.observe(ctx, svc, &ev)
			}
		}
	}
	return nil
}

// observe counts one event: the tokens and cost of a model response, the
// duration from the event before the response to the event carrying its
// usage.
func (c *metricsConnector) observe(ctx context.Context, service string, ev *agentevent.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	th := c.thread(threadKey{service: service, session: ev.SessionID, agent: ev.AgentID})
	if ev.ResponseID != th.response {
		th.response, th.respStart = ev.ResponseID, th.last
	}
	// The call started at the event before its response; an event without a
	// response id is a response of its own.
	start := th.respStart
	if ev.ResponseID == "" {
		start = th.last
	}
	if !ev.Timestamp.IsZero() && ev.Timestamp.After(th.last) {
		th.last = ev.Timestamp
	}
	in, out := agentevent.Value(ev.TokensInput), agentevent.Value(ev.TokensOutput)
	if ev.TokensInput == nil && ev.TokensOutput == nil || in+out == 0 {
		return
	}
	ts := pcommon.NewTimestampFromTime(c.now())
	base := seriesKey{service: service, provider: ev.Provider, model: ev.Model}
	if ev.TokensInput != nil {
		k := base
		k.kind, k.tokenType = kindTokens, tokenInput
		c.record(ctx, k, tokenBuckets, float64(in), ts, ev.SessionID)
	}
	if ev.TokensOutput != nil {
		k := base
		k.kind, k.tokenType = kindTokens, tokenOutput
		c.record(ctx, k, tokenBuckets, float64(out), ts, ev.SessionID)
	}
	correction := ev.Attributes[agentevent.AttrUsageCarrier] == agentevent.UsageCarrierCorrection
	if !correction && !start.IsZero() && !ev.Timestamp.Before(start) {
		k := base
		k.kind, k.errorType = kindDuration, ev.ErrorType
		c.record(ctx, k, durationBuckets, ev.Timestamp.Sub(start).Seconds(), ts, ev.SessionID)
	}
	if ev.CostUSD != nil && *ev.CostUSD > 0 {
		k := base
		k.kind = kindCost
		k.costSource, _ = ev.Attributes[agentevent.AttrCostSource].(string)
		if _, ok := c.costs[k]; !ok && !c.room(ctx) {
			return
		}
		c.costs[k] += *ev.CostUSD
	}
}

// room tells whether one more series may be created, counting the drop
// when not. Called with mu held.
func (c *metricsConnector) room(ctx context.Context) bool {
	if len(c.hists)+len(c.costs) < c.cfg.MaxSeries {
		return true
	}
	c.dropLocked(ctx, dropSeriesLimit, "`max_series` reached: observations of new series are dropped")
	return false
}

func (c *metricsConnector) record(ctx context.Context, k seriesKey, bounds []float64, v float64, ts pcommon.Timestamp, session string) {
	h, ok := c.hists[k]
	if !ok {
		if !c.room(ctx) {
			return
		}
		h = &histogram{buckets: make([]uint64, len(bounds)+1), min: v, max: v}
		c.hists[k] = h
	}
	h.buckets[sort.SearchFloat64s(bounds, v)]++
	h.count++
	h.sum += v
	h.min, h.max = min(h.min, v), max(h.max, v)
	h.exemplar = exemplar{value: v, time: ts, session: session}
}

// thread returns the duration state of a thread, creating it and
// forgetting the least recently seen one beyond max_sessions. Called with
// mu held.
func (c *metricsConnector) thread(k threadKey) *thread {
	if e, ok := c.threads[k]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*thread)
	}
	th := &thread{key: k}
	c.threads[k] = c.lru.PushFront(th)
	for c.lru.Len() > c.cfg.MaxSessions {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.threads, old.Value.(*thread).key)
	}
	return th
}

func (c *metricsConnector) drop(ctx context.Context, reason, detail string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(ctx, reason, detail)
}

func (c *metricsConnector) dropLocked(ctx context.Context, reason, detail string) {
	c.tel.AgentMetricsInputDropped.Add(ctx, 1, c.dropped[reason])
	if !c.warned[reason] {
		c.warned[reason] = true
		c.logger.Warn("Agent metrics input not counted (logged once per reason)", zap.String("reason", reason), zap.String("detail", detail))
	}
}

// flush emits every series, cumulative since Start.
func (c *metricsConnector) flush(ctx context.Context) error {
	md := c.metrics()
	if md.DataPointCount() == 0 {
		return nil
	}
	return c.next.ConsumeMetrics(ctx, md)
}

// metrics builds the current cumulative metrics: one resource per agent
// (service.name), which the series also carry as an attribute, as the
// span_metrics connector's do.
func (c *metricsConnector) metrics() pmetric.Metrics {
	c.mu.Lock()
	defer c.mu.Unlock()
	md := pmetric.NewMetrics()
	now := pcommon.NewTimestampFromTime(c.now())
	type perService struct {
		tokens, duration, cost pmetric.Metric
	}
	services := map[string]*perService{}
	get := func(service string) *perService {
		if s, ok := services[service]; ok {
			return s
		}
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr(agentevent.ResourceServiceName, service)
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(scopeName)
		s := &perService{}
		s.tokens = sm.Metrics().AppendEmpty()
		s.tokens.SetName(agentevent.MetricTokenUsage)
		s.tokens.SetUnit("{token}")
		s.tokens.SetDescription("Number of input and output tokens used.")
		s.tokens.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		s.duration = sm.Metrics().AppendEmpty()
		s.duration.SetName(agentevent.MetricOperationDuration)
		s.duration.SetUnit("s")
		s.duration.SetDescription("GenAI operation duration.")
		s.duration.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		s.cost = sm.Metrics().AppendEmpty()
		s.cost.SetName(agentevent.MetricCostUSD)
		s.cost.SetUnit("{USD}")
		s.cost.SetDescription("Cost of the model responses in US dollars.")
		sum := s.cost.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		sum.SetIsMonotonic(true)
		services[service] = s
		return s
	}
	for _, k := range sortedKeys(c.hists) {
		h := c.hists[k]
		s := get(k.service)
		m, bounds := s.tokens, tokenBuckets
		if k.kind == kindDuration {
			m, bounds = s.duration, durationBuckets
		}
		dp := m.Histogram().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(c.start)
		dp.SetTimestamp(now)
		putAttrs(dp.Attributes(), k)
		dp.ExplicitBounds().FromRaw(bounds)
		dp.BucketCounts().FromRaw(h.buckets)
		dp.SetCount(h.count)
		dp.SetSum(h.sum)
		dp.SetMin(h.min)
		dp.SetMax(h.max)
		if c.cfg.Exemplars.Enabled && h.exemplar.session != "" {
			ex := dp.Exemplars().AppendEmpty()
			ex.SetDoubleValue(h.exemplar.value)
			ex.SetTimestamp(h.exemplar.time)
			ex.FilteredAttributes().PutStr(agentevent.AttrSessionID, h.exemplar.session)
		}
	}
	for _, k := range sortedKeys(c.costs) {
		dp := get(k.service).cost.Sum().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(c.start)
		dp.SetTimestamp(now)
		putAttrs(dp.Attributes(), k)
		dp.SetDoubleValue(c.costs[k])
	}
	// A metric without data points is not sent.
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics().RemoveIf(func(m pmetric.Metric) bool {
			switch m.Type() {
			case pmetric.MetricTypeHistogram:
				return m.Histogram().DataPoints().Len() == 0
			case pmetric.MetricTypeSum:
				return m.Sum().DataPoints().Len() == 0
			}
			return false
		})
	}
	return md
}

func putAttrs(a pcommon.Map, k seriesKey) {
	a.PutStr(agentevent.ResourceServiceName, k.service)
	a.PutStr(agentevent.AttrOperationName, opChat)
	put := func(key, v string) {
		if v != "" {
			a.PutStr(key, v)
		}
	}
	put(agentevent.AttrProvider, k.provider)
	put(agentevent.AttrRequestModel, k.model)
	put(agentevent.AttrModel, k.model)
	put(agentevent.AttrTokenType, k.tokenType)
	put(agentevent.AttrErrorType, k.errorType)
	put(agentevent.AttrCostSource, k.costSource)
}

func sortedKeys[V any](m map[seriesKey]V) []seriesKey {
	keys := make([]seriesKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b seriesKey) int {
		return cmp.Or(cmp.Compare(a.service, b.service), cmp.Compare(a.kind, b.kind), cmp.Compare(a.provider, b.provider),
			cmp.Compare(a.model, b.model), cmp.Compare(a.tokenType, b.tokenType), cmp.Compare(a.errorType, b.errorType),
			cmp.Compare(a.costSource, b.costSource))
	})
	return keys
}
