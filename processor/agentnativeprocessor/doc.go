// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:generate mdatagen metadata.yaml

// Package agentnativeprocessor implements the agent_native processor: it
// lifts the OpenTelemetry coding agents emit themselves (log events, spans)
// out of pdata, hands each record to its agent's pure mapping in
// internal/vendors, and writes back agent events (logs) or normalized spans
// (traces), keeping one source (the agent's telemetry or its session files)
// per session.
package agentnativeprocessor
