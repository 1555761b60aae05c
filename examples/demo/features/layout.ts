/**
 * The demo's one page shell; feature pages pass their title and body.
 */
export function layout(title: string, body: string, head = '') {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 960px; margin: 2rem auto; padding: 0 1rem; color: #1c1c1c; }
  a { color: #3b5bdb; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e5e5e5; }
  code, pre { background: #f5f5f5; padding: .1rem .3rem; border-radius: 3px; }
  .features li { margin-bottom: .8rem; }
  .features p { margin: 0; color: #555; }
</style>
${head}
</head>
<body>
<nav><a href="/">Atrium demo</a></nav>
<h1>${title}</h1>
${body}
</body>
</html>`
}
