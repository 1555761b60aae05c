/** One bar of a chart: its label, its value and the text shown beside it */
export interface Bar {
  key: string
  label: string
  value: number
  text: string
}

/**
 * A horizontal bar chart in plain CSS: each bar's width is its share of
 * the largest value.
 */
export function Bars({ bars, empty }: { bars: Bar[]; empty: string }) {
  if (!bars.length) return <p className="muted">{empty}</p>
  const max = Math.max(...bars.map((bar) => bar.value), 1)
  return (
    <ul className="bars">
      {bars.map((bar) => (
        <li key={bar.key} data-key={bar.key}>
          <span className="bar-label" title={bar.label}>
            {bar.label}
          </span>
          <span className="bar-track">
            <span className="bar-fill" style={{ width: `${(bar.value / max) * 100}%` }} />
          </span>
          <span className="bar-text">{bar.text}</span>
        </li>
      ))}
    </ul>
  )
}

/** Runs of one day as a stacked column: succeeded, failed and cancelled */
export function RunColumns({
  days,
}: {
  days: Array<{ day: string; succeeded: number; failed: number; cancelled: number }>
}) {
  const max = Math.max(...days.map((day) => day.succeeded + day.failed + day.cancelled), 1)
  const width = 8
  return (
    <svg
      className="run-columns"
      viewBox={`0 0 ${days.length * width} 60`}
      preserveAspectRatio="none"
      role="img"
      aria-label="Runs per day: succeeded, failed, cancelled"
    >
      {days.map((day, index) => {
        let top = 60
        return (['succeeded', 'failed', 'cancelled'] as const).map((kind) => {
          const height = (day[kind] / max) * 60
          top -= height
          return (
            <rect
              key={`${day.day}-${kind}`}
              className={kind}
              x={index * width + 1}
              y={top}
              width={width - 2}
              height={height}
            >
              <title>{`${day.day}: ${day[kind]} ${kind}`}</title>
            </rect>
          )
        })
      })}
    </svg>
  )
}
