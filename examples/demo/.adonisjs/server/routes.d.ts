import '@adonisjs/core/types/http'

type ParamValue = string | number | bigint | boolean

export type ScannedRoutes = {
  ALL: {
    'atrium.payments.webhook': { paramsTuple: [ParamValue]; params: { provider: ParamValue } }
  }
  POST: {
    'atrium.payments.webhook': { paramsTuple: [ParamValue]; params: { provider: ParamValue } }
  }
  GET: {}
  HEAD: {}
}
declare module '@adonisjs/core/types/http' {
  export interface RoutesList extends ScannedRoutes {}
}
