// The ECharts strobe ships: only the chart types, components and renderer its chart options use
// (src/core/present/charts), from the npm package's modular entry points, bundled by esbuild at
// build time (scripts/echarts/build.mjs). `tests/charts_snapshot.rs` holds every chart option
// strobe builds to this list, so a chart that needs more fails natively, not in a browser.
import * as echarts from 'echarts/core';
import { BarChart, LineChart, ScatterChart } from 'echarts/charts';
import {
  DataZoomInsideComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TitleComponent,
  ToolboxComponent,
  TooltipComponent,
} from 'echarts/components';
import { LabelLayout } from 'echarts/features';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  BarChart,
  LineChart,
  ScatterChart,
  DataZoomInsideComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TitleComponent,
  ToolboxComponent,
  TooltipComponent,
  LabelLayout,
  CanvasRenderer,
]);

// The app's bindings call `echarts.init` on the page's global, as with the full build.
globalThis.echarts = echarts;
