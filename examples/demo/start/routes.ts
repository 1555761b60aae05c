import router from '@adonisjs/core/services/router'
import { features } from '../features/main.ts'
import { escapeHtml, layout } from '../features/layout.ts'
import { assetRoutes } from '../features/assets.ts'

assetRoutes(router)

router.get('/', () =>
  layout(
    'Atrium demo',
    `<p>Every Atrium feature this demo enables, with a page to try it.</p>
    <ul class="features">${features
      .map(
        (feature) =>
          `<li><a href="${escapeHtml(feature.path)}">${escapeHtml(feature.title)}</a><p>${escapeHtml(feature.description)}</p></li>`
      )
      .join('')}</ul>`
  )
)

for (const feature of features) {
  feature.routes(router)
}
