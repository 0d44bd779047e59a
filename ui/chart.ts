import uPlot from "uplot";

/** A uPlot line chart that fills its box; `series` are [label, values] over the x values (Unix seconds). */
export function lineChart(title: string, x: number[], series: [string, (number | null)[]][], opts: { bars?: boolean; xRange?: [number, number] } = {}): HTMLElement {
  const box = document.createElement("figure");
  box.className = "chart";
  box.setAttribute("role", "img");
  box.setAttribute("aria-label", `${title} chart`);
  const colours = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"];
  const make = () => {
    const width = Math.max(280, box.clientWidth || 560);
    new uPlot(
      {
        title,
        width,
        height: 200,
        scales: { x: opts.xRange ? { time: true, range: () => opts.xRange! } : { time: true } },
        axes: [{}, { size: 60 }],
        series: [
          {},
          ...series.map(([label], i) => ({
            label,
            stroke: colours[i % colours.length],
            width: 2,
            ...(opts.bars ? { paths: uPlot.paths.bars!({ size: [0.6, 40] }), fill: `${colours[i % colours.length]}55` } : {}),
          })),
        ],
      },
      [x, ...series.map(([, v]) => v)] as uPlot.AlignedData,
      box,
    );
  };
  // Drawn once the box is in the page (its width is known).
  requestAnimationFrame(make);
  return box;
}
