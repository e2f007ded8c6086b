/** The app's validated configuration (AppConfig) and its logger (PinoNestLogger). */
export const APP_CONFIG = Symbol('APP_CONFIG');
export const APP_LOGGER = Symbol('APP_LOGGER');
