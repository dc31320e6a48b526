// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:generate mdatagen metadata.yaml

// Package genaicostprocessor implements the gen_ai_cost processor: it prices
// every model response — agent events carrying token usage in a logs
// pipeline, chat spans in a traces pipeline — from an embedded, dated price
// table (overridable in config), keeps a cost the agent's own log states,
// and rolls the cost of a turn up onto its invoke_agent span.
package genaicostprocessor
