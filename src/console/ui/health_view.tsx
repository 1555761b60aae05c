import { useState } from 'react'
import { api, type ExceptionFamily, type Health } from './api.ts'
import { dateTime, duration, time } from './format.ts'
import { PruneNow } from './prune_action.tsx'
import { href, navigate } from './router.ts'
import { useLoad } from './use_load.ts'

const WINDOWS = [5, 15, 60, 360, 1440]
const CHART_WIDTH = 720
const CHART_HEIGHT = 160

/** Requests (and errors within them) per minute as bars, in an SVG sized by its viewBox */
function ThroughputChart(props: { series: Health['throughput']['series'] }) {
  const { series } = props
  const first = series[0]
  const last = series.at(-1)
  const peak = Math.max(1, ...series.map((point) => point.requests))
  const slot = CHART_WIDTH / Math.max(series.length, 1)
  const height = (value: number) => (value / peak) * (CHART_HEIGHT - 20)
  return (
    <svg
      className="chart"
      viewBox={`0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`}
      role="img"
      aria-label="Requests per minute"
    >
      <line x1="0" y1={CHART_HEIGHT} x2={CHART_WIDTH} y2={CHART_HEIGHT} className="axis" />
      <text x="4" y="12" className="label">
        {peak} / min
      </text>
      {first && last && (
        <text x={CHART_WIDTH - 4} y="12" className="label" textAnchor="end">
          {time(first.minute)} to {time(last.minute)}
        </text>
      )}
      {series.map((point, index) => (
        <g key={point.minute}>
          <title>{`${time(point.minute)}: ${point.requests} requests, ${point.errors} errors`}</title>
          <rect
            className="requests"
            x={index * slot + 1}
            width={Math.max(slot - 2, 1)}
            y={CHART_HEIGHT - height(point.requests)}
            height={height(point.requests)}
          />
          <rect
            className="errors"
            x={index * slot + 1}
            width={Math.max(slot - 2, 1)}
            y={CHART_HEIGHT - height(point.errors)}
            height={height(point.errors)}
          />
        </g>
      ))}
    </svg>
  )
}

export function ExceptionFamilies(props: { families: ExceptionFamily[] }) {
  if (props.families.length === 0) return <p className="empty">No exceptions in this window.</p>
  return (
    <table className="families">
      <thead>
        <tr>
          <th>Count</th>
          <th>Class</th>
          <th>Message</th>
          <th>Last seen</th>
        </tr>
      </thead>
      <tbody>
        {props.families.map((family) => (
          <tr key={family.fingerprint}>
            <td className="num">{family.count}</td>
            <td>{family.class}</td>
            <td className="summary">
              <a href={href(['entries', family.lastId])}>{family.message}</a>
            </td>
            <td className="nowrap">{dateTime(family.lastSeenAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function Stat(props: { label: string; value: string | number }) {
  return (
    <div className="stat">
      <span className="value">{props.value}</span>
      <span className="label">{props.label}</span>
    </div>
  )
}

export function HealthView(props: { params: URLSearchParams }) {
  const requested = Number(props.params.get('minutes'))
  const minutes = WINDOWS.includes(requested) ? requested : 60
  // bumped by a prune, so the stored counts are read again
  const [generation, setGeneration] = useState(0)
  const result = useLoad(`health:${minutes}:${generation}`, () => api.health(minutes))
  return (
    <>
      <h2>Health</h2>
      <PruneNow onPruned={() => setGeneration((value) => value + 1)} />
      <label className="window">
        Window{' '}
        <select
          value={minutes}
          onChange={(event) => navigate(href(['health'], { minutes: event.target.value }))}
        >
          {WINDOWS.map((value) => (
            <option key={value} value={value}>
              {value >= 60 ? `${value / 60} h` : `${value} min`}
            </option>
          ))}
        </select>
      </label>
      {result.state === 'loading' && <p className="muted">Loading…</p>}
      {result.state === 'error' && (
        <p className="error" role="alert">
          {result.message}
        </p>
      )}
      {result.state === 'done' && <HealthReport health={result.value.data} />}
    </>
  )
}

function HealthReport(props: { health: Health }) {
  const { recorder, throughput, routes, slowRoutes, exceptions, storage } = props.health
  return (
    <>
      <div className="stats">
        <Stat label="requests" value={throughput.requests} />
        <Stat label="errors" value={throughput.errors} />
        <Stat label="per minute" value={throughput.perMinute} />
        <Stat label="recorder" value={recorder.state} />
      </div>
      <section>
        <h3>Throughput per minute</h3>
        <ThroughputChart series={throughput.series} />
      </section>
      <section>
        <h3>Routes</h3>
        <table className="routes">
          <thead>
            <tr>
              <th>Method</th>
              <th>Route</th>
              <th>Requests</th>
              <th>Errors</th>
              <th>p50</th>
              <th>p99</th>
              <th>Max</th>
            </tr>
          </thead>
          <tbody>
            {routes.map((route) => (
              <tr key={`${route.method} ${route.route}`}>
                <td>{route.method}</td>
                <td>{route.route}</td>
                <td className="num">{route.requests}</td>
                <td className="num">{route.errors}</td>
                <td className="num">{duration(route.p50Ms)}</td>
                <td className="num">{duration(route.p99Ms)}</td>
                <td className="num">{duration(route.maxMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {routes.length === 0 && <p className="empty">No requests in this window.</p>}
      </section>
      <section>
        <h3>Slow routes</h3>
        {slowRoutes.length === 0 ? (
          <p className="empty">None.</p>
        ) : (
          <ul className="slow-routes">
            {slowRoutes.map((route) => (
              <li key={`${route.method} ${route.route}`}>
                {route.method} {route.route}: p99 {duration(route.p99Ms)} over {route.requests}{' '}
                requests
              </li>
            ))}
          </ul>
        )}
      </section>
      <section>
        <h3>Exception families</h3>
        <ExceptionFamilies families={exceptions.families} />
        {exceptions.truncated && (
          <p className="muted">Grouped from the latest {exceptions.scanned} exceptions only.</p>
        )}
      </section>
      <section className="columns">
        <div>
          <h3>Stored entries</h3>
          <table className="kv">
            <tbody>
              {Object.entries(storage.entries).map(([type, count]) => (
                <tr key={type}>
                  <th>{type}</th>
                  <td className="num">{count}</td>
                </tr>
              ))}
              <tr>
                <th>rollups</th>
                <td className="num">{storage.rollups ?? ''}</td>
              </tr>
            </tbody>
          </table>
        </div>
        <div>
          <h3>Recorder</h3>
          <table className="kv">
            <tbody>
              {Object.entries(recorder).map(([key, value]) => (
                <tr key={key}>
                  <th>{key}</th>
                  <td>{typeof value === 'object' ? JSON.stringify(value) : String(value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  )
}
