import router from '@adonisjs/core/services/router'
import { features } from '../features/main.ts'
import { layout } from '../features/layout.ts'

router.get('/', () =>
  layout(
    'Atrium demo',
    `<p>Every Atrium feature this demo enables, with a page to try it.</p>
    <ul class="features">${features
      .map(
        (feature) =>
          `<li><a href="${feature.path}">${feature.title}</a><p>${feature.description}</p></li>`
      )
      .join('')}</ul>`
  )
)

for (const feature of features) {
  feature.routes(router)
}
