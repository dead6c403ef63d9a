// Entry point of the browser app: registers the custom elements. No other side effects.
import './pooled-app.ts';
